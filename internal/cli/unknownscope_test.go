package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestSetConfigRefusesUnknownNames: a config value for a cluster type, workload or
// deployment target the environment does not have would match nothing: it is refused with
// the names the environment has, and nothing is written.
func TestSetConfigRefusesUnknownNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "platform")
	newControlPlane(t, dir)
	for _, args := range [][]string{
		{"add", "cluster-type", "plant-lyon", "--env", "dev", "--control-plane", dir, "--commit"},
		{"add", "workload", "shop", "--workspace", "retail", "--target", "web", "--env", "dev", "--repo", "https://example.com/shop", "--control-plane", dir, "--commit"},
	} {
		if code, out, errOut := runFF(t, args...); code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	head := git(t, dir, "rev-parse", "HEAD")
	for flag, want := range map[string]string{
		"--cluster-type=plant-lyn":      `cluster type "plant-lyn" is not in environment dev: the value would apply to nothing; known: plant-lyon`,
		"--workload=shoop":              `workload "shoop" is not in environment dev: the value would apply to nothing; known: shop`,
		"--deployment-target=shop-webb": `deployment target "shop-webb" is not in environment dev: the value would apply to nothing; known: shop-web`,
	} {
		code, out, errOut := runFF(t, "set", "config", "FOO=bar", flag, "--env", "dev", "--control-plane", dir, "--commit")
		if code != 1 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d\n%s\n%s\nwant %q", flag, code, out, errOut, want)
		}
	}
	if git(t, dir, "rev-parse", "HEAD") != head {
		t.Fatal("a refused change was committed")
	}
	for _, flag := range []string{"--cluster-type=plant-lyon", "--workload=shop", "--deployment-target=shop-web"} {
		if code, out, errOut := runFF(t, "set", "config", "FOO=bar", flag, "--env", "dev", "--control-plane", dir, "--commit"); code != 0 {
			t.Errorf("%s: exit %d\n%s\n%s", flag, code, out, errOut)
		}
	}
}
