package gitops_test

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// humanFiles are files people keep in the GitOps repository, outside the folders
// fleetform owns: they must never change.
var humanFiles = map[string]string{
	"README.md":                 "# Platform GitOps repository\n\nDo not edit the cluster-type folders by hand.\n",
	".github/workflows/ci.yaml": "on: push\njobs: {lint: {runs-on: ubuntu-latest, steps: [{run: yamllint .}]}}\n",
	"notes/ops.md":              "on-call notes\n",
	"legacy/old-app/app.yaml":   "kind: ConfigMap\n", // a folder without the cluster-type README
	"east-notes.md":             "about east\n",
}

// checkHumanFiles fails when a human file changed or disappeared.
func checkHumanFiles(t *testing.T, got map[string]string) {
	t.Helper()
	for p, want := range humanFiles {
		if got[p] != want {
			t.Errorf("%s was touched: %q", p, got[p])
		}
	}
}

// checkFleetTree fails unless the tree holds exactly the human files, the rendered files
// for types × targets, and fleetform's state and promoted commit.
func checkFleetTree(t *testing.T, got map[string]string, types, targets []string) {
	t.Helper()
	var rendered []string
	for p := range got {
		if _, human := humanFiles[p]; !human {
			rendered = append(rendered, p)
		}
	}
	slices.Sort(rendered)
	want := wantTree("", types, targets)
	slices.Sort(want)
	if got := withoutState(rendered, ""); !slices.Equal(got, want) {
		t.Errorf("rendered tree:\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	var shards []string
	for p := range got {
		if ct, ok := strings.CutPrefix(p, gitops.ShardDir+"/"); ok {
			shards = append(shards, ct)
		}
	}
	slices.Sort(shards)
	if !slices.Equal(shards, types) {
		t.Errorf("state shards for %v, want %v", shards, types)
	}
}

// TestOwnership walks a repository through the ownership rules: files people keep outside
// the cluster-type folders are never touched; a file fleetform no longer renders inside a
// deployment-target folder is removed (and so is anything someone added there); a cluster
// type or a deployment target that disappeared has its folder removed.
func TestOwnership(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	repo.Commit(t, "dev", humanFiles)
	w := newWriter(t, gitops.Options{})
	target := gitops.Target{Repo: repo.URL(), Branch: "dev", Path: "."}
	types, targets := slices.Clone(fleetTypes), slices.Clone(fleetTargets)

	apply(t, w, f.input(target), gitops.CommitOptions{})
	got := repo.Files(t, "dev")
	checkHumanFiles(t, got)
	checkFleetTree(t, got, types, targets)

	t.Run("files added by hand inside a deployment-target folder are removed", func(t *testing.T) {
		got := repo.Files(t, "dev")
		got["east/shop-web/extra.yaml"] = "kind: Secret\n"
		got["east/shop-web/sub/more.yaml"] = "kind: Secret\n"
		repo.Commit(t, "dev", got)
		res := apply(t, w, f.input(target), gitops.CommitOptions{})
		want := map[string]string{"east/shop-web/extra.yaml": "delete", "east/shop-web/sub/more.yaml": "delete"}
		if cs := changeSet(res.Plan); !maps.Equal(cs, want) {
			t.Errorf("changes %v, want %v", cs, want)
		}
		got = repo.Files(t, "dev")
		checkHumanFiles(t, got)
		checkFleetTree(t, got, types, targets)
	})

	t.Run("a file no longer rendered is removed", func(t *testing.T) {
		f.setConfigType("east", "builtin/env-file") // platform-config.sh instead of .yaml
		res := apply(t, w, f.input(target), gitops.CommitOptions{})
		cs := changeSet(res.Plan)
		for _, dt := range targets {
			dir := "east/shop-" + dt + "/"
			if cs[dir+render.ConfigYAMLFile] != "delete" || cs[dir+render.ConfigShFile] != "add" {
				t.Errorf("%s: changes %v", dir, cs)
			}
		}
		got := repo.Files(t, "dev")
		checkHumanFiles(t, got)
		for p := range got {
			if strings.HasPrefix(p, "east/") && strings.HasSuffix(p, render.ConfigYAMLFile) {
				t.Errorf("left behind: %s", p)
			}
		}
		// And back: the shell files go, the YAML ones come back.
		f.setConfigType("east", "builtin/configmap")
		apply(t, w, f.input(target), gitops.CommitOptions{})
		checkFleetTree(t, repo.Files(t, "dev"), types, targets)
	})

	t.Run("a cluster type that disappeared has its folder removed", func(t *testing.T) {
		f.removeClusterType("south")
		types = slices.DeleteFunc(types, func(s string) bool { return s == "south" })
		res := apply(t, w, f.input(target), gitops.CommitOptions{})
		if res.Plan.MassDelete != nil {
			t.Fatalf("refused: %v", res.Plan.MassDelete)
		}
		for p, a := range changeSet(res.Plan) {
			if p == render.PromotedCommitFile {
				continue // the control plane has a new commit
			}
			if !strings.HasPrefix(p, "south/") || a != "delete" {
				t.Errorf("unexpected change %s %s", a, p)
			}
		}
		if len(res.Plan.AssignmentsRemoved) != 3 || !slices.Equal(res.Plan.ClusterTypesAffected, []string{"south"}) {
			t.Errorf("removed %v, affected %v", res.Plan.AssignmentsRemoved, res.Plan.ClusterTypesAffected)
		}
		got := repo.Files(t, "dev")
		checkHumanFiles(t, got)
		checkFleetTree(t, got, types, targets)
	})

	t.Run("a deployment target that disappeared has its folders removed", func(t *testing.T) {
		targets = []string{"api", "web"}
		f.setTargets(targets...)
		res := apply(t, w, f.input(target), gitops.CommitOptions{})
		if res.Plan.MassDelete != nil {
			t.Fatalf("refused: %v", res.Plan.MassDelete)
		}
		for p, a := range changeSet(res.Plan) {
			if p == render.PromotedCommitFile {
				continue // the control plane has a new commit
			}
			if !strings.Contains(p, "/shop-db/") || a != "delete" {
				t.Errorf("unexpected change %s %s", a, p)
			}
		}
		if n := len(res.Plan.AssignmentsRemoved); n != len(types) {
			t.Errorf("%d assignments removed, want %d", n, len(types))
		}
		for _, a := range res.Plan.AssignmentsRemoved {
			if a.DeploymentTarget != "shop-db" || a.Workload != "shop" || a.Namespace != "dev-"+a.ClusterType+"-shop-db" {
				t.Errorf("removed %+v", a)
			}
		}
		got := repo.Files(t, "dev")
		checkHumanFiles(t, got)
		checkFleetTree(t, got, types, targets)
	})
}

// kalypsoRepository is the GitOps branch a 2023 Kalypso scheduler wrote for the sample's
// dev environment, plus files people keep there and the extra files given.
func kalypsoRepository(t *testing.T, extra map[string]string) *gittest.Repo {
	t.Helper()
	files := gittest.ReadDir(t, filepath.Join(gittest.FixtureDir(t), "gitops-2023", "dev"))
	if files["large/README.md"] != render.ReadmeText || files["large/observability-prometheus/config.yaml"] == "" {
		t.Fatalf("unexpected Kalypso fixture: %v", sortedKeys(files))
	}
	maps.Copy(files, humanFiles)
	maps.Copy(files, extra)
	repo := gittest.NewBare(t).Checked(t)
	repo.Commit(t, "dev", files)
	return repo
}

// TestAdoptKalypsoRepository: the first apply to a repository Kalypso wrote adopts its
// cluster-type folders: Kalypso's leftovers go, people's files stay, and the state is
// written so that the next apply changes nothing.
func TestAdoptKalypsoRepository(t *testing.T) {
	repo := kalypsoRepository(t, nil)
	in := loadKalypso(t)
	in.Target = gitops.Target{Repo: repo.URL(), Branch: "dev"}
	w := newWriter(t, gitops.Options{})
	res := apply(t, w, in, gitops.CommitOptions{})
	if res.Plan.MassDelete != nil || len(res.Plan.AssignmentsRemoved) != 0 {
		t.Errorf("mass delete %v, removed %v", res.Plan.MassDelete, res.Plan.AssignmentsRemoved)
	}
	cs := changeSet(res.Plan)
	if cs["large/observability-prometheus/config.yaml"] != "delete" || cs["large/observability-prometheus/platform-config.yaml"] != "add" {
		t.Errorf("changes %v: want Kalypso's config.yaml replaced by platform-config.yaml", cs)
	}
	for p := range cs {
		if !strings.HasPrefix(p, "large/observability-prometheus/") && p != render.PromotedCommitFile {
			t.Errorf("unexpected change %s %s", cs[p], p)
		}
	}
	got := repo.Files(t, "dev")
	checkHumanFiles(t, got)
	for _, ct := range []string{"command-center", "drone", "large", "small"} {
		_, shard := got[gitops.ShardDir+"/"+ct]
		if got[ct+"/README.md"] != render.ReadmeText || !shard {
			t.Errorf("%s: README %q, shard present %v", ct, got[ct+"/README.md"], shard)
		}
	}
	if got[gitops.IndexFile] == "" {
		t.Error("no state index written")
	}
	again := apply(t, w, in, gitops.CommitOptions{})
	if !again.Plan.NoChange() || !again.Commit.IsZero() {
		t.Errorf("second apply changed %v", changeSet(again.Plan))
	}
}

// TestAdoptKalypsoRepositoryStaleTarget: Kalypso never removes a deployment target's
// folder; adopting removes it, and one stale folder next to one current one is within the
// mass-deletion threshold (1 of 2 is not more than 50%).
func TestAdoptKalypsoRepositoryStaleTarget(t *testing.T) {
	repo := kalypsoRepository(t, map[string]string{
		"large/retired/namespace.yaml":  "kind: Namespace\n",
		"large/retired/reconciler.yaml": "kind: Kustomization\n",
	})
	in := loadKalypso(t)
	in.Target = gitops.Target{Repo: repo.URL(), Branch: "dev"}
	res, err := newWriter(t, gitops.Options{}).Apply(t.Context(), in, gitops.CommitOptions{})
	if err != nil {
		t.Fatalf("apply: %v (mass delete %+v)", err, res.Plan.MassDelete)
	}
	if len(res.Plan.AssignmentsRemoved) != 1 || res.Plan.AssignmentsRemoved[0].DeploymentTarget != "retired" {
		t.Errorf("removed %v", res.Plan.AssignmentsRemoved)
	}
	got := repo.Files(t, "dev")
	checkHumanFiles(t, got)
	for p := range got {
		if strings.HasPrefix(p, "large/retired/") {
			t.Errorf("%s left behind", p)
		}
	}
}

// TestAdoptKalypsoRepositoryMassDelete: adopting a repository where most owned folders
// would go (a cluster type Kalypso left behind, with its targets) is refused with the right
// counts, writes nothing, and goes through with AllowMassDelete.
func TestAdoptKalypsoRepositoryMassDelete(t *testing.T) {
	extra := map[string]string{
		"medium/README.md":             render.ReadmeText,
		"medium/a/namespace.yaml":      "kind: Namespace\n",
		"medium/b/namespace.yaml":      "kind: Namespace\n",
		"large/retired/namespace.yaml": "kind: Namespace\n",
	}
	repo := kalypsoRepository(t, extra)
	tip := repo.Tip(t, "dev")
	in := loadKalypso(t)
	in.Target = gitops.Target{Repo: repo.URL(), Branch: "dev"}
	res, err := newWriter(t, gitops.Options{}).Apply(t.Context(), in, gitops.CommitOptions{})
	if err == nil || res == nil || res.Plan.MassDelete == nil {
		t.Fatalf("apply: %v; want refused", err)
	}
	// Owned: large/observability-prometheus, large/retired, medium/a, medium/b; 3 go.
	if md := res.Plan.MassDelete; md.Removed != 3 || md.Owned != 4 {
		t.Errorf("mass delete %+v, want 3 of 4", md)
	}
	if got := repo.Tip(t, "dev"); got != tip {
		t.Errorf("refused apply moved dev to %s", got)
	}
	res = apply(t, newWriter(t, gitops.Options{AllowMassDelete: true}), in, gitops.CommitOptions{})
	got := repo.Files(t, "dev")
	checkHumanFiles(t, got)
	for p := range got {
		if strings.HasPrefix(p, "medium/") || strings.HasPrefix(p, "large/retired/") {
			t.Errorf("%s left behind", p)
		}
	}
	if !slices.Contains(res.Plan.ClusterTypesAffected, "medium") {
		t.Errorf("affected %v", res.Plan.ClusterTypesAffected)
	}
}

// TestNewClusterTypeInSomeonesFolder: a new cluster type named like a folder people keep in
// the branch writes its targets there and removes nothing of theirs: fleetform never wrote
// the folder, so its sub-folders are not fleetform's.
func TestNewClusterTypeInSomeonesFolder(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	repo.Commit(t, "dev", humanFiles)
	w := newWriter(t, gitops.Options{})
	target := gitops.Target{Repo: repo.URL(), Branch: "dev", Path: "."}
	apply(t, w, f.input(target), gitops.CommitOptions{})

	f.addClusterType("legacy")
	res := apply(t, w, f.input(target), gitops.CommitOptions{})
	if len(res.Plan.AssignmentsRemoved) != 0 {
		t.Errorf("removed %v", res.Plan.AssignmentsRemoved)
	}
	got := repo.Files(t, "dev")
	checkHumanFiles(t, got)
	if got["legacy/README.md"] == "" || got["legacy/shop-api/namespace.yaml"] == "" {
		t.Errorf("the new cluster type was not written into legacy/: %v", slices.Sorted(maps.Keys(got)))
	}
}
