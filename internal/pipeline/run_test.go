package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/render"
)

// TestLoadReusing: a run rendered reusing the one before a change is the run Load makes
// (files, failures, diagnostics), whether the change breaks assignments or fixes them,
// and the assignments the change does not touch take the files rendered before.
func TestLoadReusing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := fleetgen.Write(dir, fleetgen.Spec{Targets: 20, ClusterTypes: 4}); err != nil {
		t.Fatal(err)
	}
	cfgs, err := filepath.Glob(filepath.Join(dir, "environments", "dev", "cluster-types", "*", "*", "*-config.yaml"))
	if err != nil || len(cfgs) == 0 {
		t.Fatalf("no cluster-type config (%v)", err)
	}
	original, err := os.ReadFile(cfgs[0])
	if err != nil {
		t.Fatal(err)
	}
	load := func() *Run {
		cp, err := controlplane.Open(ctx, dir, controlplane.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Load(ctx, cp, "dev", UpToRender, render.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	prev := load()
	for _, c := range []struct {
		name    string
		content string
		broken  bool
	}{
		{"a value out of the schema", strings.Replace(string(original), "data:\n", "data:\n  REPLICAS: \"500\"\n", 1), true},
		{"the value fixed", string(original), false},
	} {
		if err := os.WriteFile(cfgs[0], []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		want := load()
		got, err := LoadReusing(ctx, want.ControlPlane, "dev", render.Options{}, prev)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if failed := compareOutputs(t, c.name, got.Output, want.Output); failed != c.broken {
			t.Errorf("%s: assignments failed: %v, want %v", c.name, failed, c.broken)
		}
		if reused := reusedFiles(got.Output, prev.Output); reused == 0 || reused == len(got.Output.Assignments) {
			t.Errorf("%s: %d of %d assignments took the files rendered before, want those the change does not touch",
				c.name, reused, len(got.Output.Assignments))
		}
		prev = got
	}
}

// compareOutputs reports where got is not want, and whether an assignment failed.
func compareOutputs(t *testing.T, name string, got, want *render.Output) (failed bool) {
	t.Helper()
	if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
		t.Errorf("%s: diagnostics\n%+v\nwant\n%+v", name, got.Diagnostics, want.Diagnostics)
	}
	if len(got.Assignments) != len(want.Assignments) {
		t.Fatalf("%s: %d assignments, want %d", name, len(got.Assignments), len(want.Assignments))
	}
	for i := range want.Assignments {
		g, w := &got.Assignments[i], &want.Assignments[i]
		failed = failed || w.Err != nil
		if g.Dir() != w.Dir() || g.InputDigest != w.InputDigest || fmt.Sprint(g.Err) != fmt.Sprint(w.Err) ||
			!reflect.DeepEqual(g.Files, w.Files) || !reflect.DeepEqual(g.Waiting, w.Waiting) {
			t.Errorf("%s: assignment %s: %+v, %v\nwant %s: %+v, %v", name, g.Dir(), g.Files, g.Err, w.Dir(), w.Files, w.Err)
		}
	}
	return failed
}

// reusedFiles counts the assignments of got whose files are those of prev.
func reusedFiles(got, prev *render.Output) int {
	had := map[*render.Files]bool{}
	for _, a := range prev.Assignments {
		had[a.Files] = a.Files != nil
	}
	n := 0
	for _, a := range got.Assignments {
		if had[a.Files] {
			n++
		}
	}
	return n
}
