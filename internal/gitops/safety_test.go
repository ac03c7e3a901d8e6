package gitops_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/schedule"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// appliedFleet is a fleet applied once to a new bare repository.
func appliedFleet(t *testing.T) (*fleet, *gittest.Repo, gitops.Target) {
	t.Helper()
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.URL(), Branch: "dev"}
	apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	return f, repo, target
}

// TestMassDeleteGuard: an apply that removes more than the threshold of the owned
// deployment-target folders writes nothing and says why, unless allowed; the threshold is
// configurable, and exactly the threshold is allowed.
func TestMassDeleteGuard(t *testing.T) {
	cases := []struct {
		name      string
		change    func(f *fleet)
		threshold float64
		removed   int // of 12
		refused   bool
	}{
		{"two of three targets", func(f *fleet) { f.setTargets("web") }, 0, 8, true},
		{"two of three targets, threshold 0.7", func(f *fleet) { f.setTargets("web") }, 0.7, 8, false},
		{"three of four cluster types", func(f *fleet) {
			f.removeClusterType("east")
			f.removeClusterType("north")
			f.removeClusterType("south")
		}, 0, 9, true},
		{"half of the cluster types (exactly the threshold)", func(f *fleet) {
			f.removeClusterType("east")
			f.removeClusterType("north")
		}, 0, 6, false},
		{"one cluster type, threshold 0.2", func(f *fleet) { f.removeClusterType("south") }, 0.2, 3, true},
		{"one cluster type", func(f *fleet) { f.removeClusterType("south") }, 0, 3, false},
		{"an empty workload file", func(f *fleet) { f.setTargets() }, 0, 12, true},
		{"the workload file gone", func(f *fleet) { delete(f.files, "shop.yaml") }, 0, 12, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, repo, target := appliedFleet(t)
			tip := repo.Tip(t, "dev")
			c.change(f)
			in := f.input(target)
			opts := gitops.Options{MassDeleteThreshold: c.threshold}

			plan, err := newWriter(t, opts).Plan(t.Context(), in)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(plan.AssignmentsRemoved); got != c.removed {
				t.Errorf("plan removes %d assignments, want %d", got, c.removed)
			}
			if (plan.MassDelete != nil) != c.refused {
				t.Errorf("plan's mass delete %+v, want refused=%v", plan.MassDelete, c.refused)
			}

			res, err := newWriter(t, opts).Apply(t.Context(), in, gitops.CommitOptions{})
			if !c.refused {
				if err != nil || res.Commit.IsZero() {
					t.Fatalf("apply: %v, commit %v", err, res)
				}
				return
			}
			var md *gitops.MassDelete
			if !errors.Is(err, gitops.ErrRefused) || !errors.As(err, &md) {
				t.Fatalf("apply: %v; want refused", err)
			}
			want := c.threshold
			if want == 0 {
				want = 0.5
			}
			if md.Removed != c.removed || md.Owned != 12 || md.Threshold != want || res.Plan.MassDelete == nil {
				t.Errorf("mass delete %+v, want %d of 12 over %v", md, c.removed, want)
			}
			if !res.Commit.IsZero() || repo.Tip(t, "dev") != tip {
				t.Errorf("refused apply wrote %s", res.Commit)
			}
			if !strings.Contains(err.Error(), "--allow-mass-delete") {
				t.Errorf("error does not say how to go on: %v", err)
			}

			// Allowed: it goes through.
			opts.AllowMassDelete = true
			res = apply(t, newWriter(t, opts), in, gitops.CommitOptions{})
			if res.Commit.IsZero() || len(res.Plan.AssignmentsRemoved) != c.removed {
				t.Errorf("allowed apply: commit %s, removed %d", res.Commit, len(res.Plan.AssignmentsRemoved))
			}
		})
	}
}

// TestNothingRemovedWhileInputHasErrors: while the control plane has an error, the folders
// of targets and cluster types that vanished are kept (deferred, not reported as removed);
// once it is fixed they go.
func TestNothingRemovedWhileInputHasErrors(t *testing.T) {
	f, repo, target := appliedFleet(t)
	before := repo.Files(t, "dev")
	f.files["environments/dev/broken.yaml"] = "kind: ConfigMap\nmetadata: {name: broken\n"
	f.setTargets("api", "web")
	f.removeClusterType("south")
	in := f.input(target)
	if !controlplane.HasErrors(in.Snapshot.Diagnostics) {
		t.Fatal("the broken file is not an error")
	}
	res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if len(res.Plan.AssignmentsRemoved) != 0 || res.Plan.MassDelete != nil {
		t.Errorf("removed %v (mass delete %v) while the input has errors", res.Plan.AssignmentsRemoved, res.Plan.MassDelete)
	}
	deferred := slices.Sorted(slices.Values(res.Plan.Deferred))
	want := []string{"east/shop-db", "north/shop-db", "south", "west/shop-db"}
	if !slices.Equal(deferred, want) {
		t.Errorf("deferred %v, want %v", deferred, want)
	}
	after := repo.Files(t, "dev")
	for p, content := range before {
		if strings.HasPrefix(p, gitops.StateDir+"/") || p == ".github/tracking/Promoted_Commit_Id" {
			continue
		}
		if after[p] != content {
			t.Errorf("%s changed or removed while the input has errors", p)
		}
	}

	// Again with the error still there: still kept (the state still knows them).
	res = apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if len(res.Plan.AssignmentsRemoved) != 0 || len(res.Plan.Deferred) != 4 {
		t.Errorf("second apply: removed %v, deferred %v", res.Plan.AssignmentsRemoved, res.Plan.Deferred)
	}

	// Fixed: 6 of 12 go (exactly the threshold).
	delete(f.files, "environments/dev/broken.yaml")
	res = apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if len(res.Plan.AssignmentsRemoved) != 6 || len(res.Plan.Deferred) != 0 {
		t.Errorf("after the fix: removed %d, deferred %v", len(res.Plan.AssignmentsRemoved), res.Plan.Deferred)
	}
	checkFleetTree(t, repo.Files(t, "dev"), []string{"east", "north", "west"}, []string{"api", "web"})
}

// TestUnreachableWorkloadSourceKeepsTheFleet: when a workload registration's repository
// cannot be read, its targets vanish from the schedule, but their folders stay.
func TestUnreachableWorkloadSourceKeepsTheFleet(t *testing.T) {
	k := gittest.NewKalypso(t)
	repo := gittest.NewBare(t).Checked(t)
	load := func(repoMap map[string]string) gitops.Input {
		cp, err := controlplane.Open(t.Context(), k.ControlPlane.Dir, controlplane.Options{RepoMap: repoMap})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := cp.Load(t.Context(), "dev")
		if err != nil {
			t.Fatal(err)
		}
		return gitops.Input{Snapshot: snap, Schedule: schedule.Schedule(snap), Target: gitops.Target{Repo: repo.Dir, Branch: "dev"}}
	}
	apply(t, newWriter(t, gitops.Options{}), load(k.RepoMap), gitops.CommitOptions{})
	before := repo.Files(t, "dev")
	if before["large/observability-prometheus/reconciler.yaml"] == "" {
		t.Fatal("nothing rendered for the registered workload")
	}

	// The registration's repository is not mapped any more: unreachable.
	in := load(nil)
	if len(in.Schedule.Assignments) != 0 {
		t.Fatalf("%d assignments without the workload source", len(in.Schedule.Assignments))
	}
	for _, opts := range []gitops.Options{{}, {AllowMassDelete: true}} {
		res := apply(t, newWriter(t, opts), in, gitops.CommitOptions{})
		if len(res.Plan.AssignmentsRemoved) != 0 || !slices.Equal(res.Plan.Deferred, []string{"large/observability-prometheus"}) {
			t.Errorf("allow mass delete %v: removed %v, deferred %v", opts.AllowMassDelete, res.Plan.AssignmentsRemoved, res.Plan.Deferred)
		}
		if !res.Commit.IsZero() {
			t.Errorf("allow mass delete %v: committed %s: %v", opts.AllowMassDelete, res.Commit, changeSet(res.Plan))
		}
	}
	if after := repo.Files(t, "dev"); !maps.Equal(before, after) {
		t.Errorf("the tree changed")
	}
}

const pickyTemplate = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Template
metadata: {name: picky}
spec:
  type: config
  manifests:
    - |
      {{ if eq .DeploymentTargetName "shop-api" }}{{ fail "shop-api cannot be configured" }}{{ end }}apiVersion: v1
      kind: ConfigMap
      metadata:
        name: picky-config
        namespace: {{ .Namespace }}
      data:
      {{ stringify .ConfigData | indent 2 }}
`

// TestFailedAssignmentKeepsItsFiles: an assignment whose rendering fails keeps its
// previous files and is reported; everything else is applied; it is tried again at every
// apply until it works.
func TestFailedAssignmentKeepsItsFiles(t *testing.T) {
	f, repo, target := appliedFleet(t)
	before := repo.Files(t, "dev")
	f.files["templates/picky.yaml"] = pickyTemplate
	f.setConfigType("east", "picky")
	f.setNodeCount("north", "9")
	res := apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})

	if len(res.Plan.Failed) != 1 {
		t.Fatalf("failed %+v, want east/shop-api", res.Plan.Failed)
	}
	fa := res.Plan.Failed[0]
	if fa.ClusterType != "east" || fa.DeploymentTarget != "shop-api" || !strings.Contains(fa.Error, "shop-api cannot be configured") {
		t.Errorf("failed %+v", fa)
	}
	cs := changeSet(res.Plan)
	for _, p := range []string{"east/shop-web/platform-config.yaml", "east/shop-db/platform-config.yaml",
		"north/shop-api/platform-config.yaml", "north/shop-web/platform-config.yaml", "north/shop-db/platform-config.yaml"} {
		if cs[p] != "modify" {
			t.Errorf("%s: %q, want modify (the rest is applied)", p, cs[p])
		}
	}
	after := repo.Files(t, "dev")
	for _, name := range assignmentFiles {
		p := "east/shop-api/" + name
		if after[p] != before[p] || cs[p] != "" {
			t.Errorf("%s changed although its assignment failed", p)
		}
	}
	if !strings.Contains(after["east/shop-web/platform-config.yaml"], "picky-config") {
		t.Errorf("east/shop-web not rendered with the new template:\n%s", after["east/shop-web/platform-config.yaml"])
	}

	// Nothing else changed: the failed assignment is rendered and reported again, nothing
	// is committed.
	res = apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if len(res.Plan.Failed) != 1 || !res.Commit.IsZero() || res.Plan.Rendered != 0 || res.Plan.Skipped != 11 {
		t.Errorf("again: failed %v, commit %s, rendered %d, skipped %d", res.Plan.Failed, res.Commit, res.Plan.Rendered, res.Plan.Skipped)
	}

	// Fixed: it is rendered.
	f.files["templates/picky.yaml"] = strings.Replace(pickyTemplate, `fail "shop-api cannot be configured"`, `"# api"`, 1)
	res = apply(t, newWriter(t, gitops.Options{}), f.input(target), gitops.CommitOptions{})
	if len(res.Plan.Failed) != 0 || res.Plan.Rendered != 3 {
		t.Errorf("fixed: failed %v, rendered %d", res.Plan.Failed, res.Plan.Rendered)
	}
	if got := repo.Files(t, "dev")["east/shop-api/platform-config.yaml"]; !strings.Contains(got, "picky-config") || !strings.HasPrefix(got, "# api") {
		t.Errorf("east/shop-api/platform-config.yaml after the fix:\n%s", got)
	}
}
