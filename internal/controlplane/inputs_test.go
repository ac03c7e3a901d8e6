package controlplane_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestSameInputs: a load records every tree it read (the control-plane directory once, a
// registration's git repository at its branch), and SameInputs holds until a file of the
// directory a load may read, the name of any of its files, or the repository's branch
// changes.
func TestSameInputs(t *testing.T) {
	t.Parallel()
	const url = "https://example.com/apps"
	r := gittest.New(t)
	r.Commit(t, "main", map[string]string{"workloads/a.yaml": workloadDoc("shop", "dev")})
	cp := newDir(t, map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"registrations.yaml":        registrationDoc("shop", url, "main", "workloads", "team-a"),
		"README.md":                 "not read by any environment\n",
	})
	opts := controlplane.Options{RepoMap: controlplane.RepoMap{url: r.Dir}}
	snap := load(t, cp, "dev", opts)
	requireNoDiags(t, snap)
	if len(snap.Inputs) != 2 {
		t.Fatalf("inputs %+v, want the directory and the registration's repository", snap.Inputs)
	}
	dir, reg := snap.Inputs[0], snap.Inputs[1]
	if dir.Repo != "" || !strings.HasPrefix(dir.Identity, "dir sha256:") {
		t.Errorf("control plane recorded as %+v", dir)
	}
	if reg.Repo != url || reg.Ref != "main" || reg.Identity != r.Tip(t, "main").String() {
		t.Errorf("registration recorded as %+v, want %s at main %s", reg, url, r.Tip(t, "main"))
	}
	same := func() bool { return open(t, cp, opts).SameInputs(t.Context(), snap.Inputs) }
	if !same() {
		t.Fatal("nothing changed, but SameInputs is false")
	}
	if again := load(t, cp, "dev", opts); !slices.Equal(again.Inputs, snap.Inputs) {
		t.Errorf("a second load recorded %+v, want %+v", again.Inputs, snap.Inputs)
	}

	// A file a load may read (YAML), even for a comment; any file's name. Not the content of
	// a file no load reads.
	if err := os.WriteFile(filepath.Join(cp, "README.md"), []byte("changed, and never read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !same() {
		t.Error("README.md's content changed (a load never reads it), but SameInputs is false")
	}
	regs := filepath.Join(cp, "registrations.yaml")
	for _, edit := range []func() error{
		func() error {
			return os.WriteFile(regs, []byte("# a comment\n"+registrationDoc("shop", url, "main", "workloads", "team-a")), 0o644)
		},
		func() error { return os.Rename(filepath.Join(cp, "README.md"), filepath.Join(cp, "README.txt")) },
	} {
		if err := edit(); err != nil {
			t.Fatal(err)
		}
		if same() {
			t.Error("a file changed, but SameInputs is true")
		}
		snap = load(t, cp, "dev", opts)
		if !same() {
			t.Error("loaded again, SameInputs is false")
		}
	}

	// A new commit on the registration's branch, even one that changes nothing read.
	r.Commit(t, "main", map[string]string{"workloads/a.yaml": workloadDoc("shop", "dev"), "other.txt": "x"})
	if same() {
		t.Error("the registration's branch moved, but SameInputs is true")
	}
	// A repository that is gone.
	if err := os.RemoveAll(r.Dir); err != nil {
		t.Fatal(err)
	}
	if same() {
		t.Error("the registration's repository is gone, but SameInputs is true")
	}
}
