package render_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/golden"
)

func renderKalypso(t *testing.T, env string, opts render.Options) (*render.Output, *gittest.Kalypso) {
	t.Helper()
	k := gittest.NewKalypso(t)
	cp, err := controlplane.Open(t.Context(), k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap})
	if err != nil {
		t.Fatal(err)
	}
	snap, err := cp.Load(t.Context(), env)
	if err != nil {
		t.Fatal(err)
	}
	out := render.Render(snap, schedule.Schedule(snap), opts)
	for _, d := range out.Diagnostics {
		t.Errorf("diagnostic: %v", d)
	}
	return out, k
}

// TestKalypsoGoldenTree renders Kalypso's sample (dev and stage) and compares every file
// with testdata/kalypso-<env>/. The promoted commit depends on the fixture build, so it is
// checked separately.
func TestKalypsoGoldenTree(t *testing.T) {
	for _, env := range []string{"dev", "stage"} {
		t.Run(env, func(t *testing.T) {
			out, k := renderKalypso(t, env, render.Options{})
			tree := out.Tree()
			if got := string(tree[render.PromotedCommitFile]); got != k.Main.String() {
				t.Errorf("%s = %q, want the pinned main commit %s", render.PromotedCommitFile, got, k.Main)
			}
			delete(tree, render.PromotedCommitFile)
			golden.Tree(t, filepath.Join("testdata", "kalypso-"+env), tree, *update)
		})
	}
}

// TestRenderIsDeterministic renders twice, with one worker and with many, and requires
// byte-identical trees.
func TestRenderIsDeterministic(t *testing.T) {
	a, _ := renderKalypso(t, "dev", render.Options{Workers: 1})
	b, _ := renderKalypso(t, "dev", render.Options{Workers: 8})
	ta, tb := a.Tree(), b.Tree()
	delete(ta, render.PromotedCommitFile) // two fixture builds, two commits
	delete(tb, render.PromotedCommitFile)
	if len(ta) != len(tb) {
		t.Fatalf("trees differ in size: %d vs %d", len(ta), len(tb))
	}
	for p, content := range ta {
		if !bytes.Equal(content, tb[p]) {
			t.Errorf("%s differs between renders", p)
		}
	}
	for i := range a.Assignments {
		if a.Assignments[i].InputDigest != b.Assignments[i].InputDigest {
			t.Errorf("input digest of %s differs between renders", a.Assignments[i].Dir())
		}
	}
}
