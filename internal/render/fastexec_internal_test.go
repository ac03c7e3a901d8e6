package render

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestFastDataHasNoMethods: the fast executor reads the template data's fields without
// looking for methods of the same names, as text/template would.
func TestFastDataHasNoMethods(t *testing.T) {
	if n := reflect.TypeFor[*Data]().NumMethod(); n != 0 {
		t.Fatalf("*Data has %d exported methods: the fast executor's field lookup must look for them first", n)
	}
}

// TestFastCompilesEveryBuiltin: the fast executor runs every manifest of every built-in
// template (a template it cannot run would silently run with text/template).
func TestFastCompilesEveryBuiltin(t *testing.T) {
	e := NewEngine(&controlplane.Snapshot{})
	c := e.acquire()
	for _, name := range e.Names() {
		tmpl, _ := e.Lookup(name)
		if tmpl.mutates {
			t.Errorf("%s changes its data: it never runs with the fast executor", name)
			continue
		}
		for i, p := range c.bind(tmpl).fast {
			if p == nil {
				t.Errorf("%s[%d]: the fast executor cannot run it", name, i)
			}
		}
	}
}

// TestFastMatchesTextTemplateOnTheGoldenControlPlanes renders the control planes of the
// golden tests (every built-in template, Kalypso's templates) with the fast executor and
// with text/template only: the outputs are the same, and the fast executor gave no manifest
// back to text/template.
func TestFastMatchesTextTemplateOnTheGoldenControlPlanes(t *testing.T) {
	k := gittest.NewKalypso(t)
	for _, c := range []struct {
		dir  string
		opts controlplane.Options
	}{
		{"testdata/builtin/controlplane", controlplane.Options{}},
		{k.ControlPlane.Dir, controlplane.Options{RepoMap: k.RepoMap}},
	} {
		cp, err := controlplane.Open(t.Context(), c.dir, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		envs, _, err := cp.Environments(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		rendered := 0
		for _, env := range envs {
			snap, err := cp.Load(t.Context(), env.Name)
			if err != nil {
				t.Fatal(err)
			}
			sched := schedule.Schedule(snap)
			fast := NewRenderer(snap, sched, Options{})
			fast.Prepare()
			got := fast.Render(func(*Assignment) bool { return true })
			slow := NewRenderer(snap, sched, Options{textTemplateOnly: true})
			slow.Prepare()
			want := slow.Render(func(*Assignment) bool { return true })
			rendered += len(got.Assignments)
			for i := range want.Assignments {
				compareRendered(t, fmt.Sprintf("%s %s %s", c.dir, env.Name, want.Assignments[i].Dir()), &got.Assignments[i], &want.Assignments[i])
			}
			if n := fast.r.engine.fastStops.Load(); n != 0 {
				t.Errorf("%s %s: the fast executor gave %d manifests back to text/template", c.dir, env.Name, n)
			}
		}
		if rendered == 0 {
			t.Errorf("%s: nothing rendered", c.dir)
		}
	}
}

func compareRendered(t *testing.T, what string, got, want *Assignment) {
	t.Helper()
	if fmt.Sprint(got.Err) != fmt.Sprint(want.Err) {
		t.Errorf("%s: error %v, want %v", what, got.Err, want.Err)
	}
	if (got.Files == nil) != (want.Files == nil) {
		t.Fatalf("%s: files %v, want %v", what, got.Files, want.Files)
	}
	if got.Files != nil && !reflect.DeepEqual(got.Files, want.Files) {
		t.Errorf("%s: files differ:\n%+v\nwant\n%+v", what, got.Files, want.Files)
	}
}
