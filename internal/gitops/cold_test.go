package gitops_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestColdApplyIntoEmptyRepository writes a whole environment into an empty bare
// repository (no branch at all) through each way of reaching it: the branch is created and
// holds exactly the rendered tree, fleetform's state and the promoted commit.
func TestColdApplyIntoEmptyRepository(t *testing.T) {
	for _, transport := range []string{"path", "file", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFleet(t)
			root := t.TempDir()
			repo, err := gittest.InitRepo(filepath.Join(root, "gitops.git"), true)
			if err != nil {
				t.Fatal(err)
			}
			repo.Checked(t)
			loc := map[string]string{"path": repo.Dir, "file": repo.URL()}[transport]
			if transport == "http" {
				loc = gittest.ServeRepo(t, repo)
			}
			in := f.input(gitops.Target{Repo: loc, Branch: "dev"})
			res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})

			if res.Commit.IsZero() || res.Branch != "dev" || res.Attempts != 1 || !res.Plan.Base.IsZero() {
				t.Fatalf("commit %s on %q after %d attempt(s), base %s", res.Commit, res.Branch, res.Attempts, res.Plan.Base)
			}
			if got := gitCLI(t, repo.Dir, "rev-parse", "dev"); strings.TrimSpace(got) != res.Commit.String() {
				t.Errorf("dev is %s, want the applied commit %s", got, res.Commit)
			}
			gitCLI(t, repo.Dir, "fsck", "--strict", "--no-dangling")
			files := treeFiles(t, repo.Dir, "dev")
			want := wantTree("", fleetTypes, fleetTargets)
			if got := withoutState(files, ""); !slices.Equal(got, want) {
				t.Errorf("tree:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !slices.Contains(files, gitops.IndexFile) {
				t.Errorf("%s missing from %v", gitops.IndexFile, files)
			}
			if slices.Contains(files, ".github/tracking/Promoted_Commit_Id") {
				t.Errorf("Promoted_Commit_Id written, but nothing is pinned")
			}
			for _, ct := range fleetTypes {
				if !slices.Contains(files, gitops.ShardDir+"/"+ct) {
					t.Errorf("no state shard for %s", ct)
				}
			}
			if n := commitCount(t, repo.Dir); n != 1 {
				t.Errorf("%d commits, want 1", n)
			}
			want12 := len(fleetTypes) * len(fleetTargets)
			if res.Plan.Rendered != want12 || res.Plan.Skipped != 0 || len(res.Plan.AssignmentsAdded) != want12 {
				t.Errorf("rendered %d, skipped %d, added %d; want %d, 0, %d", res.Plan.Rendered, res.Plan.Skipped,
					len(res.Plan.AssignmentsAdded), want12, want12)
			}
			if !slices.Equal(res.Plan.ClusterTypesAffected, fleetTypes) {
				t.Errorf("cluster types affected %v, want %v", res.Plan.ClusterTypesAffected, fleetTypes)
			}
			cfg := gitCLI(t, repo.Dir, "show", "dev:north/shop-web/platform-config.yaml")
			for _, s := range []string{"NODE_COUNT: \"3\"", "LOG_LEVEL: info", `namespace: "dev-north-shop-web"`} {
				if !strings.Contains(cfg, s) {
					t.Errorf("north/shop-web/platform-config.yaml lacks %q:\n%s", s, cfg)
				}
			}
		})
	}
}

// TestApplyCreatesMissingBranch writes to a branch the repository does not have yet: it
// starts a new history (the other branches are not its parents and do not move).
func TestApplyCreatesMissingBranch(t *testing.T) {
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFleet(t)
			repo := gittest.NewBare(t).Checked(t)
			main := repo.Commit(t, "main", map[string]string{"README.md": "GitOps repository\n"})
			loc := repo.URL()
			if transport == "http" {
				loc = gittest.ServeRepo(t, repo)
			}
			res := apply(t, newWriter(t, gitops.Options{}), f.input(gitops.Target{Repo: loc, Branch: "dev"}), gitops.CommitOptions{})
			if res.Commit.IsZero() || !res.Plan.Base.IsZero() {
				t.Fatalf("commit %s, base %s", res.Commit, res.Plan.Base)
			}
			if got := strings.TrimSpace(gitCLI(t, repo.Dir, "rev-parse", "dev")); got != res.Commit.String() {
				t.Errorf("dev is %s, want %s", got, res.Commit)
			}
			if got := repo.Tip(t, "main"); got != main {
				t.Errorf("main moved to %s", got)
			}
			if n := commitCount(t, repo.Dir); n != 1 {
				t.Errorf("dev has %d commits, want 1 (a new history)", n)
			}
		})
	}
}

// TestApplyHonoursGitOpsRepoPath writes under the GitOpsRepo's spec.path into a branch
// that already has other content: every new file lands under the path, and nothing
// outside it changes.
func TestApplyHonoursGitOpsRepoPath(t *testing.T) {
	for _, transport := range []string{"file", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := newFleet(t)
			f.files["environments/dev/gitops-repo.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: dev}
spec: {repo: "https://github.com/org/gitops", branch: dev, path: clusters/dev}
`
			repo := gittest.NewBare(t).Checked(t)
			outside := map[string]string{
				"README.md":                   "GitOps repository\n",
				"clusters/prod/big/README.md": "prod, written by someone else\n",
				"clusters/dev-notes.md":       "a sibling of the path, not under it\n",
				".github/workflows/ci.yaml":   "on: push\n",
			}
			base := repo.Commit(t, "dev", outside)
			loc := repo.URL()
			if transport == "http" {
				loc = gittest.ServeRepo(t, repo)
			}
			in := f.input(gitops.Target{})
			in.Target = gitops.TargetFor(in.Snapshot, gitops.Target{}, func(string) string { return loc })
			if in.Target.Path != "clusters/dev" || in.Target.Branch != "dev" || in.Target.Repo != loc {
				t.Fatalf("target %+v", in.Target)
			}
			res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
			if res.Plan.Base != base {
				t.Fatalf("planned against %s, want the branch tip %s", res.Plan.Base, base)
			}
			changed := changedPaths(t, repo.Dir, res.Commit.String())
			for p, status := range changed {
				if !strings.HasPrefix(p, "clusters/dev/") || status != "A" {
					t.Errorf("%s %s: outside the path, or not an addition", status, p)
				}
			}
			for _, c := range res.Plan.Changes {
				if _, ok := changed["clusters/dev/"+c.Path]; !ok {
					t.Errorf("planned change %s %s is not in the commit (plan paths are relative to the path)", c.Action, c.Path)
				}
			}
			for _, p := range wantTree("clusters/dev/", fleetTypes, fleetTargets) {
				if changed[p] != "A" {
					t.Errorf("%s not added", p)
				}
			}
			if p := "clusters/dev/" + gitops.IndexFile; changed[p] != "A" {
				t.Errorf("%s not added", p)
			}
			got := repo.Files(t, "dev")
			for p, content := range outside {
				if got[p] != content {
					t.Errorf("%s changed: %q", p, got[p])
				}
			}
		})
	}
}
