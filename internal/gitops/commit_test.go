package gitops_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestCommitDefaults: one commit, by fleetform, whose message names the control-plane
// commit and summarises the change, with trailers; the promoted commit is recorded.
func TestCommitDefaults(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	in := f.input(gitops.Target{Repo: repo.URL(), Branch: "dev"})
	cpCommit := in.Snapshot.Revisions.Environment
	if len(cpCommit) != 40 || cpCommit != f.repo.Tip(t, "main").String() {
		t.Fatalf("control-plane revision %q, want the fleet's main tip %s", cpCommit, f.repo.Tip(t, "main"))
	}
	res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})

	if got := gitCLI(t, repo.Dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "dev"); strings.TrimSpace(got) != "fleetform <fleetform@localhost>|fleetform <fleetform@localhost>" {
		t.Errorf("author|committer %q", got)
	}
	msg := gitCLI(t, repo.Dir, "log", "-1", "--format=%B", "dev")
	for _, want := range []string{
		"fleetform: apply dev from control plane " + cpCommit[:12] + "\n\n",
		"40 file(s) added, 0 modified, 0 deleted; 12 assignment(s) added, 0 removed, 12 re-rendered.\n",
		"Cluster types: east, north, south, west.\n",
		"Fleetform-Environment: dev\n",
		"Control-Plane-Commit: " + cpCommit + "\n",
		"Common-Commit: " + in.Snapshot.Revisions.Common + "\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.HasPrefix(msg, "fleetform: apply dev from control plane ") {
		t.Errorf("subject: %q", strings.SplitN(msg, "\n", 2)[0])
	}
	checkRenderedCommit(t, repo.Dir, in.Snapshot.Revisions.Common)

	// A change to one cluster type: one more commit, on top of the first, summarising it
	// (its 3 platform-config files; the state records the new common commit).
	f.setNodeCount("east", "5")
	in = f.input(in.Target)
	res2 := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if got := strings.TrimSpace(gitCLI(t, repo.Dir, "rev-parse", "dev^")); got != res.Commit.String() {
		t.Errorf("second commit's parent %s, want the first %s", got, res.Commit)
	}
	if n := commitCount(t, repo.Dir); n != 2 {
		t.Errorf("%d commits, want 2", n)
	}
	msg = gitCLI(t, repo.Dir, "log", "-1", "--format=%B", res2.Commit.String())
	for _, want := range []string{
		"from control plane " + in.Snapshot.Revisions.Environment[:12] + "\n",
		"0 file(s) added, 3 modified, 0 deleted; 0 assignment(s) added, 0 removed, 3 re-rendered.\n",
		"Cluster types: east.\n",
		"Control-Plane-Commit: " + in.Snapshot.Revisions.Environment + "\n",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("second message lacks %q:\n%s", want, msg)
		}
	}
	checkRenderedCommit(t, repo.Dir, in.Snapshot.Revisions.Common)
}

// checkRenderedCommit requires the dev branch to record common as the commit it was rendered
// from, in fleetform's state and not in Promoted_Commit_Id: the environment is not pinned.
func checkRenderedCommit(t *testing.T, dir, common string) {
	t.Helper()
	if common == "" {
		t.Fatal("no common commit")
	}
	if got, err := gitops.RenderedCommit([]byte(gitCLI(t, dir, "show", "dev:"+gitops.IndexFile))); got != common || err != nil {
		t.Errorf("rendered commit %q (%v), want the common commit %q", got, err, common)
	}
	if files := treeFiles(t, dir, "dev"); slices.Contains(files, render.PromotedCommitFile) {
		t.Errorf("%s written for an environment that is not pinned", render.PromotedCommitFile)
	}
}

// TestCommitAuthorAndMessageConfigurable: the author, the subject and the time come from
// the commit options; the summary and trailers stay.
func TestCommitAuthorAndMessageConfigurable(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	in := f.input(gitops.Target{Repo: repo.Dir, Branch: "dev"})
	when := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{
		AuthorName: "Platform Bot", AuthorEmail: "bot@example.com", Subject: "deploy: dev fleet",
		Now: func() time.Time { return when },
	})
	got := gitCLI(t, repo.Dir, "log", "-1", "--format=%an|%ae|%cn|%ce|%at|%s", "dev")
	if want := "Platform Bot|bot@example.com|Platform Bot|bot@example.com|1772600767|deploy: dev fleet\n"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	msg := gitCLI(t, repo.Dir, "log", "-1", "--format=%B", "dev")
	if !strings.Contains(msg, "\n\n40 file(s) added") || !strings.Contains(msg, "Control-Plane-Commit: "+in.Snapshot.Revisions.Environment) {
		t.Errorf("message:\n%s", msg)
	}
}

// TestPromotedCommitOnlyWhenPinned: Promoted_Commit_Id is written when the environment pins
// a commit of the common content (as Kalypso does), and removed when the pin goes (the
// environment follows the tip again: nothing promoted any more).
func TestPromotedCommitOnlyWhenPinned(t *testing.T) {
	f := newFleet(t)
	repo := gittest.NewBare(t).Checked(t)
	target := gitops.Target{Repo: repo.Dir, Branch: "dev"}
	first := f.input(target).Snapshot.Revisions.Common
	f.files["environments/dev/base-repo.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: BaseRepo
metadata: {name: main}
spec: {repo: https://example.com/cp, branch: main, path: ., commit: ` + first + `}
`
	in := f.input(target)
	if !in.Snapshot.Revisions.Pinned || in.Snapshot.Revisions.Common != first {
		t.Fatalf("revisions %+v, want pinned to %s", in.Snapshot.Revisions, first)
	}
	apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	if got := gitCLI(t, repo.Dir, "show", "dev:"+render.PromotedCommitFile); got != first {
		t.Errorf("Promoted_Commit_Id %q, want the pinned commit %s", got, first)
	}

	delete(f.files, "environments/dev/base-repo.yaml")
	in = f.input(target)
	res := apply(t, newWriter(t, gitops.Options{}), in, gitops.CommitOptions{})
	// The common content is still the first commit's (the pin's commits changed dev's folder):
	// the state's record of it stays.
	checkCommitPaths(t, repo.Dir, res.Commit.String(), map[string]string{render.PromotedCommitFile: "D"})
	if in.Snapshot.Revisions.Common != first {
		t.Errorf("unpinned, dev renders common commit %s, want %s (the last change of the common content)", in.Snapshot.Revisions.Common, first)
	}
	checkRenderedCommit(t, repo.Dir, in.Snapshot.Revisions.Common)
}
