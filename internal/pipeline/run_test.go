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

// TestLoadKnowing: a run that knows what rendered without error before a change has the
// diagnostics and failures of the run Load makes, and its files where it renders, whether
// the change breaks assignments or fixes them; only the assignments the change touches are
// rendered.
func TestLoadKnowing(t *testing.T) {
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
		known := map[string]bool{}
		prev.AddRendered(known)
		got, err := LoadKnowing(ctx, want.ControlPlane, "dev", render.Options{}, func(d string) bool { return known[d] })
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if failed := compareOutputs(t, c.name, got.Output, want.Output); failed != c.broken {
			t.Errorf("%s: assignments failed: %v, want %v", c.name, failed, c.broken)
		}
		if skipped := notRendered(got.Output); skipped == 0 || skipped == len(got.Output.Assignments) {
			t.Errorf("%s: %d of %d assignments not rendered, want those the change does not touch",
				c.name, skipped, len(got.Output.Assignments))
		}
		prev = got
	}
}

// compareOutputs reports where got is not want (an assignment known to render may have no
// files), and whether an assignment failed.
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
			(g.Files != nil && !reflect.DeepEqual(g.Files, w.Files)) || !reflect.DeepEqual(g.Waiting, w.Waiting) ||
			!reflect.DeepEqual(configData(g), configData(w)) {
			t.Errorf("%s: assignment %s: %+v, %v\nwant %s: %+v, %v", name, g.Dir(), g.Files, g.Err, w.Dir(), w.Files, w.Err)
		}
	}
	return failed
}

// notRendered counts the assignments of out without files or error.
func notRendered(out *render.Output) int {
	n := 0
	for _, a := range out.Assignments {
		if a.Files == nil && a.Err == nil {
			n++
		}
	}
	return n
}

func configData(a *render.Assignment) map[string]any {
	if a.Config == nil {
		return nil
	}
	return a.Config.Data
}
