package gitops_test

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// setWorkload makes workload name have these deployment targets, each labelled tier: back.
func (f *fleet) setWorkload(name string, targets ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: %s, labels: {workspace: retail}}\nspec:\n  deploymentTargets:\n", name)
	for _, dt := range targets {
		fmt.Fprintf(&b, "    - {name: %s, environment: dev, labels: {tier: back}, manifests: {repo: https://example.com/%s, branch: main, path: ./%s}}\n",
			dt, name, dt)
	}
	f.files[name+".yaml"] = b.String()
}

// appliedWorkloads is the fleet with n more workloads (wl0 ...), of deployment targets a
// and b each, applied to a new repository under path.
func appliedWorkloads(t *testing.T, n int, path string) (*fleet, *gittest.Repo, gitops.Target) {
	t.Helper()
	f := newFleet(t)
	for i := range n {
		f.setWorkload(fmt.Sprintf("wl%d", i), "a", "b")
	}
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev", Path: path}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	return f, repo, target
}

// TestPlanByWorkload: a plan made from the workload keys the state records (only the
// changed workloads' assignments composed and rendered, neither shard nor keys read) shows
// exactly what the apply of the same change then commits: files, assignments added and
// removed, cluster types affected, assignments rendered and unchanged (except that the
// plan counts unchanged an assignment whose inputs changed and files did not). A change it
// cannot plan by workload (a target added or removed, a workload gone, most of a cluster
// type changed) is planned as the apply does. At the repository's root and under a path.
func TestPlanByWorkload(t *testing.T) {
	for _, path := range []string{"", "clusters/dev"} {
		t.Run("path "+path, func(t *testing.T) {
			f, _, target := appliedWorkloads(t, 7, path)

			types := len(fleetTypes)
			steps := []struct {
				name       string
				change     func()
				byWorkload bool // planned by workload: the plan composes every assignment of the changed workloads
				composed   int  // the plan's, when planned by workload
				// sameFiles counts the assignments the apply renders again whose files do not
				// change: planned by workload, they are counted unchanged.
				sameFiles int
			}{
				{"one workload's manifests", func() {
					f.files["wl3.yaml"] = strings.ReplaceAll(f.files["wl3.yaml"], "branch: main", "branch: release")
				}, true, 2 * types, 0},
				{"one target's label", func() {
					f.files["wl5.yaml"] = strings.Replace(f.files["wl5.yaml"], "tier: back", "tier: front", 1)
				}, true, 2 * types, 1 * types},
				{"two workloads at once", func() {
					f.files["wl1.yaml"] = strings.ReplaceAll(f.files["wl1.yaml"], "path: ./", "path: ./v2/")
					f.files["wl6.yaml"] = strings.ReplaceAll(f.files["wl6.yaml"], "path: ./", "path: ./v2/")
				}, true, 4 * types, 0},
				{"a workload's label", func() {
					f.files["wl2.yaml"] = strings.Replace(f.files["wl2.yaml"], "workspace: retail", "workspace: retail, team: a", 1)
				}, true, 2 * types, 2 * types},
				{"a target added", func() { f.setWorkload("wl4", "a", "b", "c") }, false, 0, 0},
				{"a target renamed", func() { f.setWorkload("wl4", "a", "b", "d") }, false, 0, 0},
				{"a workload removed", func() { delete(f.files, "wl0.yaml") }, false, 0, 0},
				{"one cluster type's config", func() { f.setNodeCount("north", "9") }, false, 0, 0},
				{"the workload as it was", func() {
					f.files["wl3.yaml"] = strings.ReplaceAll(f.files["wl3.yaml"], "branch: release", "branch: main")
				}, true, 2 * types, 0},
			}
			for _, s := range steps {
				t.Run(s.name, func(t *testing.T) {
					s.change()
					in := f.input(target)
					plan, err := newWriter(t, gitops.Options{}).Plan(t.Context(), in)
					if err != nil {
						t.Fatal(err)
					}
					res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
					got, want := plan, res.Plan
					if !slices.Equal(sortedKeys(changeSet(got)), sortedKeys(changeSet(want))) || fmt.Sprint(changeSet(got)) != fmt.Sprint(changeSet(want)) {
						t.Errorf("plan changes %v\napply changes %v", changeSet(got), changeSet(want))
					}
					if fmt.Sprint(got.AssignmentsAdded, got.AssignmentsRemoved, got.ClusterTypesAffected) !=
						fmt.Sprint(want.AssignmentsAdded, want.AssignmentsRemoved, want.ClusterTypesAffected) {
						t.Errorf("plan added %v, removed %v, affected %v\napply added %v, removed %v, affected %v", got.AssignmentsAdded,
							got.AssignmentsRemoved, got.ClusterTypesAffected, want.AssignmentsAdded, want.AssignmentsRemoved, want.ClusterTypesAffected)
					}
					if got.Rendered != want.Rendered-s.sameFiles || got.Skipped != want.Skipped+s.sameFiles {
						t.Errorf("plan rendered %d, unchanged %d; apply %d, %d (%d of them with the same files)", got.Rendered, got.Skipped,
							want.Rendered, want.Skipped, s.sameFiles)
					}
					if got.StateChanged != want.StateChanged && len(want.Changes) > 0 {
						t.Errorf("plan state changed %v, apply %v", got.StateChanged, want.StateChanged)
					}
					switch {
					case s.byWorkload && got.Composed != s.composed:
						t.Errorf("plan composed %d, want %d (planned by workload)", got.Composed, s.composed)
					case !s.byWorkload && got.Composed != want.Composed:
						t.Errorf("plan composed %d, apply %d (planned as the apply is)", got.Composed, want.Composed)
					}
					if len(want.Changes) == 0 && s.sameFiles == 0 {
						t.Errorf("the step changes nothing")
					}
				})
			}
		})
	}
}

// TestWorkloadKeysOfAnEarlierState: a state written without workload keys (by an earlier
// release) gets them, for every cluster type, with the next apply that commits; a plan
// before that compares assignment by assignment, and shows the same files.
func TestWorkloadKeysOfAnEarlierState(t *testing.T) {
	f, repo, target := appliedWorkloads(t, 5, "")
	files := repo.Files(t, "dev")
	for name := range files {
		if strings.HasPrefix(name, gitops.WorkloadsDir+"/") {
			delete(files, name)
		}
	}
	repo.Commit(t, "dev", files) // the state as an earlier release wrote it

	f.files["wl2.yaml"] = strings.ReplaceAll(f.files["wl2.yaml"], "branch: main", "branch: release")
	in := f.input(target)
	plan, err := newWriter(t, gitops.Options{}).Plan(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if fmt.Sprint(changeSet(plan)) != fmt.Sprint(changeSet(res.Plan)) || plan.Composed != res.Plan.Composed {
		t.Errorf("plan: %v, %d composed\napply: %v, %d composed", changeSet(plan), plan.Composed, changeSet(res.Plan), res.Plan.Composed)
	}
	after := repo.Files(t, "dev")
	for _, ct := range fleetTypes {
		if after[gitops.WorkloadsDir+"/"+ct] == "" {
			t.Errorf("no workload keys for %s after the apply", ct)
		}
	}
	f.setNodeCount("east", "5") // a change the next plan makes by workload for the other cluster types
	f.files["wl4.yaml"] = strings.ReplaceAll(f.files["wl4.yaml"], "branch: main", "branch: release")
	in = f.input(target)
	if plan, err = newWriter(t, gitops.Options{}).Plan(t.Context(), in); err != nil {
		t.Fatal(err)
	}
	res = apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if fmt.Sprint(changeSet(plan)) != fmt.Sprint(changeSet(res.Plan)) {
		t.Errorf("plan: %v\napply: %v", changeSet(plan), changeSet(res.Plan))
	}
	// east is composed in full (its config changed); on the three others, wl4's two targets.
	if want := 13 + 3*2; plan.Composed != want {
		t.Errorf("plan composed %d, want %d", plan.Composed, want)
	}
}

// TestPlanWithBrokenWorkloadKeys: workload keys that are not what an apply writes (a file
// edited by hand) are ignored, with a warning naming the cluster type: the plan compares
// that cluster type assignment by assignment, and still shows what the apply commits.
func TestPlanWithBrokenWorkloadKeys(t *testing.T) {
	f, repo, target := appliedWorkloads(t, 5, "")
	files := repo.Files(t, "dev")
	files[gitops.WorkloadsDir+"/north"] = "not workload keys\n"
	repo.Commit(t, "dev", files)

	f.files["wl2.yaml"] = strings.Replace(f.files["wl2.yaml"], "path: ./a}", "path: ./a2}", 1) // one of its two targets
	in := f.input(target)
	var logs strings.Builder
	plan, err := newWriter(t, gitops.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}).Plan(t.Context(), in)
	if err != nil {
		t.Fatal(err)
	}
	res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if fmt.Sprint(changeSet(plan)) != fmt.Sprint(changeSet(res.Plan)) || len(plan.Changes) == 0 {
		t.Errorf("plan: %v\napply: %v", changeSet(plan), changeSet(res.Plan))
	}
	if !strings.Contains(logs.String(), "ignoring a state file") || !strings.Contains(logs.String(), "cluster_type=north") {
		t.Errorf("no warning about north's workload keys:\n%s", logs.String())
	}
	// north compared by assignment (the changed target's assignment composed), the three
	// others by workload (both of wl2's).
	if plan.Composed != 1+3*2 {
		t.Errorf("plan composed %d, want %d", plan.Composed, 1+3*2)
	}
}
