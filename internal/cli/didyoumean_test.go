package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
)

// TestDidYouMean: a misspelled flag, environment, cluster type or deployment target is
// refused with the nearest known one.
func TestDidYouMean(t *testing.T) {
	cp := filepath.Join(t.TempDir(), "cp")
	writeTree(t, cp, hostileControlPlane)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explain", "--control-plane", cp, "--env", "dev", "--cluster-typ", "east"}, cli.ExitUsage,
			"unknown flag: --cluster-typ (did you mean --cluster-type?)"},
		{[]string{"explain", "--control-plane", cp, "--env", "dev", "--cluster-type", "easst"}, cli.ExitFailed,
			`cluster type "easst" does not exist in environment dev (did you mean "east"?)`},
		{[]string{"explain", "--control-plane", cp, "--env", "dev", "--deployment-target", "shop-wbe"}, cli.ExitFailed,
			`deployment target "shop-wbe" does not exist (did you mean "shop-web"?)`},
		{[]string{"schedule", "--control-plane", cp, "--env", "dve"}, cli.ExitFailed,
			`environment "dve" is not declared; declared: dev (did you mean "dev"?)`},
		{[]string{"explain", "--control-plane", cp, "--env", "dev", "--cluster-type", "nothing-like-it"}, cli.ExitFailed,
			`cluster type "nothing-like-it" does not exist in environment dev` + "\n"},
	} {
		code, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("fleetform %s: exit %d, want %d with %q:\n%s", strings.Join(c.args, " "), code, c.code, c.want, stderr)
		}
	}
}

// TestVersionFlag: --version prints the version, as the version command does.
func TestVersionFlag(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := cli.Main(t.Context(), []string{"--version"}, nil, &stdout, &stderr); code != cli.ExitOK ||
		stdout.String() != "fleetform version "+cli.Version()+"\n" {
		t.Errorf("--version: exit %d, %q (stderr %q)", code, stdout.String(), stderr.String())
	}
}
