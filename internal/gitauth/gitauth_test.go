package gitauth_test

import (
	"encoding/base64"
	"slices"
	"testing"

	"github.com/fleetform/fleetform/internal/gitauth"
)

func TestNoToken(t *testing.T) {
	t.Setenv("FLEETFORM_GIT_TOKEN", "")
	t.Setenv("FLEETFORM_GIT_USERNAME", "someone")
	if _, _, ok := gitauth.FromEnv(); ok {
		t.Error("FromEnv found credentials without a token")
	}
	if env := gitauth.HeaderEnv(); env != nil {
		t.Errorf("HeaderEnv without a token: %q", env)
	}
}

func TestHeaderEnv(t *testing.T) {
	t.Setenv("FLEETFORM_GIT_TOKEN", "s3cret")
	t.Setenv("FLEETFORM_GIT_USERNAME", "")
	if user, token, ok := gitauth.FromEnv(); !ok || user != "git" || token != "s3cret" {
		t.Errorf("FromEnv = %q, %q, %v; want the default user git", user, token, ok)
	}
	t.Setenv("FLEETFORM_GIT_USERNAME", "bot")
	want := []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("bot:s3cret"))}
	if got := gitauth.HeaderEnv(); !slices.Equal(got, want) {
		t.Errorf("HeaderEnv = %q, want %q", got, want)
	}
}
