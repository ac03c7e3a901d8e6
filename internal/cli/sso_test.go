package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSingleSignOnFlags: a single sign-on setup that cannot work is refused before
// anything starts, naming the flag to fix.
func TestSingleSignOnFlags(t *testing.T) {
	db := "sqlite:" + filepath.Join(t.TempDir(), "hub.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"hub", "serve", "--db", db, "--oidc-issuer", "https://idp.example.com"}, "--oidc-client-id"},
		{[]string{"hub", "serve", "--db", db, "--oidc-issuer", "idp.example.com", "--oidc-client-id", "c"}, "--oidc-issuer"},
		{[]string{"hub", "serve", "--db", db, "--disable-token-sign-in"}, "needs --oidc-issuer"},
		{[]string{"hub", "serve", "--db", db, "--oidc-trusted-issuer", "https://token.actions.githubusercontent.com"}, "ISSUER=AUDIENCE"},
		{[]string{"hub", "serve", "--db", db, "--oidc-issuer", "https://idp", "--oidc-client-id", "c", "--external-url", "fleetform.example.com"}, "--external-url"},
		{[]string{"serve", "--control-plane", t.TempDir(), "--oidc-client-id", "c"}, "need --oidc-issuer"},
	} {
		code, _, errOut := runFF(t, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 naming %s", c.args, code, errOut, c.want)
		}
	}
}
