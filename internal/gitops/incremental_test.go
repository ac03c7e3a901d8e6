package gitops_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// stateFiles are the state files a change to the given cluster types rewrites.
func stateFiles(types ...string) []string {
	out := []string{gitops.IndexFile}
	for _, ct := range types {
		out = append(out, gitops.ShardDir+"/"+ct, gitops.KeysDir+"/"+ct, gitops.WorkloadsDir+"/"+ct)
	}
	return out
}

// checkCommitPaths fails unless the commit changed exactly the paths given, with status.
func checkCommitPaths(t *testing.T, dir, commit string, want map[string]string) {
	t.Helper()
	got := changedPaths(t, dir, commit)
	if !maps.Equal(got, want) {
		t.Errorf("commit changed:\n  %v\nwant\n  %v", got, want)
	}
}

// TestNoChangeNoCommit: applying the same control plane again writes nothing and says so,
// in the same writer and in a fresh one (which reads the state from the repository).
func TestNoChangeNoCommit(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	w := newWriter(t, gitops.Options{})
	first := apply(t, w, f.input(target), gitops.CommitOptions{})
	for name, w := range map[string]*gitops.Writer{"same writer": w, "fresh writer": newWriter(t, gitops.Options{})} {
		res := apply(t, w, f.input(target), gitops.CommitOptions{})
		if !res.Commit.IsZero() || !res.Plan.NoChange() || len(res.Plan.Changes) != 0 || res.Plan.StateChanged || res.Branch != "" {
			t.Errorf("%s: commit %s, changes %v, state changed %v, branch %q", name, res.Commit, changeSet(res.Plan), res.Plan.StateChanged, res.Branch)
		}
		if res.Plan.Rendered != 0 || res.Plan.Skipped != 12 || res.Plan.Composed != 0 || res.Plan.Base != first.Commit {
			t.Errorf("%s: rendered %d, skipped %d, composed %d, base %s; want 0, 12, 0, %s", name,
				res.Plan.Rendered, res.Plan.Skipped, res.Plan.Composed, res.Plan.Base, first.Commit)
		}
	}
	if got := repo.Tip(t, "dev"); got != first.Commit {
		t.Errorf("dev moved to %s", got)
	}
	if n := commitCount(t, repo.Dir); n != 1 {
		t.Errorf("%d commits, want 1", n)
	}
}

// TestIncremental: every apply runs in a fresh writer (as a new process would), reads the
// state from the repository and renders only the assignments whose inputs changed; the
// commit touches exactly their files and the state of their cluster types.
func TestIncremental(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})

	// Each step re-renders these cluster types / targets; the control-plane commit changes
	// every time, and with it the promoted commit.
	steps := []struct {
		name     string
		change   func()
		rendered int
		composed int      // the assignments of the cluster types whose key changed
		files    []string // the rendered files that change (all modified)
		types    []string // cluster types whose state changes
	}{
		{"one cluster type's config", func() { f.setNodeCount("north", "7") }, 3, 3,
			[]string{"north/shop-api/platform-config.yaml", "north/shop-db/platform-config.yaml", "north/shop-web/platform-config.yaml"},
			[]string{"north"}},
		{"one deployment target's manifests", func() {
			f.files["shop.yaml"] = strings.Replace(f.files["shop.yaml"], "path: ./web}", "path: ./web-v2}", 1)
		}, 4, 4,
			[]string{"east/shop-web/reconciler.yaml", "north/shop-web/reconciler.yaml", "south/shop-web/reconciler.yaml", "west/shop-web/reconciler.yaml"},
			fleetTypes},
		{"an unrelated file", func() { f.files["docs/notes.md"] = "not a manifest\n" }, 0, 0, nil, nil},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			s.change()
			res := apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
			if res.Plan.Rendered != s.rendered || res.Plan.Skipped != 12-s.rendered || res.Plan.Composed != s.composed {
				t.Errorf("rendered %d, skipped %d, composed %d; want %d, %d, %d", res.Plan.Rendered, res.Plan.Skipped,
					res.Plan.Composed, s.rendered, 12-s.rendered, s.composed)
			}
			want := map[string]string{gitops.IndexFile: "M"} // the state records the new common commit
			for _, p := range s.files {
				want[p] = "M"
			}
			if len(s.types) > 0 {
				for _, p := range stateFiles(s.types...) {
					want[p] = "M"
				}
			}
			checkCommitPaths(t, repo.Dir, res.Commit.String(), want)
			var affected []string
			for _, p := range s.files {
				ct, _, _ := strings.Cut(p, "/")
				affected = append(affected, ct)
			}
			affected = slices.Compact(affected)
			if !slices.Equal(res.Plan.ClusterTypesAffected, affected) {
				t.Errorf("cluster types affected %v, want %v", res.Plan.ClusterTypesAffected, affected)
			}
		})
	}
}

// TestIncrementalRestoresHandEdits: a cluster-type folder someone else changed is rendered
// in full and restored, and only that cluster type is rendered.
func TestIncrementalRestoresHandEdits(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	before := repo.Files(t, "dev")
	edited := maps.Clone(before)
	edited["west/shop-api/namespace.yaml"] = "kind: Namespace # edited by hand\n"
	delete(edited, "west/shop-db/reconciler.yaml")
	repo.Commit(t, "dev", edited)

	res := apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if res.Plan.Rendered != 3 || res.Plan.Skipped != 9 {
		t.Errorf("rendered %d, skipped %d; want only west's 3 rendered", res.Plan.Rendered, res.Plan.Skipped)
	}
	want := map[string]string{"west/shop-api/namespace.yaml": "modify", "west/shop-db/reconciler.yaml": "add"}
	if got := changeSet(res.Plan); !maps.Equal(got, want) {
		t.Errorf("changes %v, want %v", got, want)
	}
	after := repo.Files(t, "dev")
	delete(before, gitops.IndexFile) // records the folder's tree, which is the same again
	delete(after, gitops.IndexFile)
	if !maps.Equal(before, after) {
		for p := range before {
			if before[p] != after[p] {
				t.Errorf("%s not restored", p)
			}
		}
	}
}

// TestIncrementalWithoutState: a state that cannot be read is ignored: every assignment is
// rendered and compared blob by blob, identical files are not rewritten, and the state is
// written again.
func TestIncrementalWithoutState(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	files := repo.Files(t, "dev")
	files[gitops.IndexFile] = "something else\n"
	repo.Commit(t, "dev", files)

	res := apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if res.Plan.Rendered != 12 || len(res.Plan.Changes) != 0 || !res.Plan.StateChanged {
		t.Errorf("rendered %d, changes %v, state changed %v; want 12, none, true", res.Plan.Rendered, changeSet(res.Plan), res.Plan.StateChanged)
	}
	checkCommitPaths(t, repo.Dir, res.Commit.String(), map[string]string{gitops.IndexFile: "M"})
	again := apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if !again.Plan.NoChange() || again.Plan.Rendered != 0 {
		t.Errorf("after the state was rewritten: rendered %d, changes %v", again.Plan.Rendered, changeSet(again.Plan))
	}
}

// TestIncrementalMatchesCold: after every change, an incremental apply (a fresh writer
// reading the state, skipping cluster types and assignments by their keys) leaves the same
// tree as a cold apply of the same control plane into an empty repository. The changes
// include a failing assignment (its files and state are kept), a change to it while it
// fails, and its fix with nothing else changed.
func TestIncrementalMatchesCold(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	manifests := func(from, to string) func() {
		return func() {
			f.files["shop.yaml"] = strings.Replace(f.files["shop.yaml"], "path: ./"+from+"}", "path: ./"+to+"}", 1)
		}
	}
	fixed := strings.Replace(pickyTemplate, `fail "shop-api cannot be configured"`, `"# api"`, 1)
	steps := []struct {
		name    string
		change  func()
		failing bool
	}{
		{"one cluster type's config", func() { f.setNodeCount("north", "7") }, false},
		{"one target's manifests", manifests("web", "web-v2"), false},
		{"a template that fails for one target", func() {
			f.files["templates/picky.yaml"] = pickyTemplate
			f.setConfigType("east", "picky")
		}, true},
		{"the failing target's manifests", manifests("api", "api-v2"), true},
		{"the template fixed", func() { f.files["templates/picky.yaml"] = fixed }, false},
		{"broken again", func() { f.files["templates/picky.yaml"] = pickyTemplate }, true},
		{"fixed again, nothing else changed", func() { f.files["templates/picky.yaml"] = fixed }, false},
		{"a target removed, one added", func() { f.setTargets("api", "web", "cdn") }, false},
		{"a comment", func() { f.files["environments/dev/dev-config.yaml"] = "# levels\n" + envConfig("info") }, false},
		{"the environment's config", func() { f.files["environments/dev/dev-config.yaml"] = envConfig("debug") }, false},
	}
	for _, s := range steps {
		s.change()
		in := f.input(target)
		planned, err := newWriter(t, gitops.Options{}).Plan(t.Context(), in)
		if err != nil {
			t.Fatalf("%s: plan: %v", s.name, err)
		}
		res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
		samePlan(t, s.name, planned, res.Plan)
		if got := len(res.Plan.Failed) > 0; got != s.failing {
			t.Fatalf("%s: failed %v, want failures %v", s.name, res.Plan.Failed, s.failing)
		}
		if s.failing {
			continue // a cold apply has no earlier files to keep
		}
		cold := gittest.NewBare(t)
		in.Target = gitops.Target{Repo: cold.URL(), Branch: "dev"}
		apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
		if got, want := renderedTree(t, repo.Dir), renderedTree(t, cold.Dir); got != want {
			t.Errorf("%s: the incremental tree\n%s\ndiffers from the cold one\n%s", s.name, got, want)
		}
		if got, want := gitCLI(t, repo.Dir, "ls-tree", "-r", "dev", gitops.StateDir), gitCLI(t, cold.Dir, "ls-tree", "-r", "dev", gitops.StateDir); got != want {
			t.Errorf("%s: the incremental state\n%s\ndiffers from the cold one\n%s", s.name, got, want)
		}
	}
}

// samePlan fails unless a plan that is only shown says what the apply's own plan said.
func samePlan(t *testing.T, step string, shown, applied *gitops.Plan) {
	t.Helper()
	type summary struct {
		Changes                     []gitops.Change
		Added, Removed              []gitops.AssignmentRef
		Affected, Deferred          []string
		Failed                      []gitops.FailedAssignment
		Rendered, Skipped, Composed int
		StateChanged                bool
	}
	sum := func(p *gitops.Plan) summary {
		return summary{p.Changes, p.AssignmentsAdded, p.AssignmentsRemoved, p.ClusterTypesAffected, p.Deferred, p.Failed,
			p.Rendered, p.Skipped, p.Composed, p.StateChanged}
	}
	if got, want := sum(shown), sum(applied); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: plan says\n%+v\nthe apply planned\n%+v", step, got, want)
	}
}

// renderedTree lists branch dev's files with their object names, without fleetform's state.
func renderedTree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(gitCLI(t, dir, "ls-tree", "-r", "dev")), "\n") {
		if _, p, _ := strings.Cut(line, "\t"); !strings.HasPrefix(p, gitops.StateDir+"/") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
