package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
)

// TestMemoOf: only a clean apply published to its target branch is remembered, never one
// whose URLs carry credentials; the report remembered is the one of an apply with nothing
// to do at the tip the apply left.
func TestMemoOf(t *testing.T) {
	cp, err := controlplane.Open(context.Background(), t.TempDir(), controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	commit := plumbing.NewHash("1111111111111111111111111111111111111111")
	base := plumbing.NewHash("2222222222222222222222222222222222222222")
	target := gitops.Target{Repo: "https://example.com/gitops.git", Branch: "dev", Path: "."}
	applied := func(t gitops.Target, branch string) *Applied {
		return &Applied{Result: &gitops.Result{Plan: &gitops.Plan{Target: t, Base: base}, Commit: commit, Branch: branch}}
	}
	run := func(inputs ...controlplane.InputTree) *Run {
		return &Run{ControlPlane: cp, Snapshot: &controlplane.Snapshot{Inputs: inputs}}
	}
	doc := PlanReport{Environment: "dev", Base: base.String(), Changes: []ChangeReport{{Path: "a/b/c.yaml", Action: "add"}},
		Rendered: 3, Skipped: 7, ClusterTypesAffected: []string{"a"}}

	m, ok := memoOf(run(controlplane.InputTree{Repo: "https://example.com/apps", Ref: "main", Identity: "c0ffee"}), applied(target, "dev"), doc)
	if !ok {
		t.Fatal("a clean apply is not remembered")
	}
	if m.Tip != commit.String() || m.Report.Base != commit.String() || len(m.Report.Changes) != 0 ||
		m.Report.Rendered != 0 || m.Report.Skipped != 10 || len(m.Report.ClusterTypesAffected) != 0 {
		t.Errorf("remembered %+v, want no change at the commit with 10 assignments up to date", m)
	}

	withWarning := doc
	withWarning.Warnings = []controlplane.Diagnostic{{Severity: controlplane.SeverityWarning, Message: "lands nowhere"}}
	for name, c := range map[string]struct {
		r   *Run
		a   *Applied
		doc PlanReport
	}{
		"a warning":                   {run(), applied(target, "dev"), withWarning},
		"published to another branch": {run(), applied(target, "fleetform/dev/x"), doc},
		"a pull request":              {run(), &Applied{Result: applied(target, "dev").Result, PullRequest: &forge.PullRequest{Number: 1}}, doc},
		"a token in the GitOps URL":   {run(), applied(gitops.Target{Repo: "https://x:secret@example.com/gitops.git", Branch: "dev"}, "dev"), doc},
		"a token in a workload URL":   {run(controlplane.InputTree{Repo: "https://x:secret@example.com/apps", Ref: "main"}), applied(target, "dev"), doc},
		"nothing applied":             {run(), &Applied{}, doc},
	} {
		if _, ok := memoOf(c.r, c.a, c.doc); ok {
			t.Errorf("%s: remembered", name)
		}
	}
}

// TestMemosForget: an apply that is not clean removes the record of the one before, and a
// record that cannot be read (or another format) answers nothing.
func TestMemosForget(t *testing.T) {
	dir := t.TempDir()
	m := NewMemos(dir, nil)
	key := MemoKey("apply", "dev")
	if err := os.WriteFile(filepath.Join(dir, key), []byte(`{"format":"something else"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Open(context.Background(), t.TempDir(), controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Unchanged(context.Background(), key, cp, nil); ok {
		t.Fatal("a record of another format answered")
	}
	m.Remember(key, &Run{ControlPlane: cp, Snapshot: &controlplane.Snapshot{}}, &Applied{}, PlanReport{})
	if _, err := os.Stat(filepath.Join(dir, key)); !os.IsNotExist(err) {
		t.Errorf("the record of the apply before is still there after an apply that is not clean (%v)", err)
	}
	if MemoKey("a", "bc") == MemoKey("ab", "c") {
		t.Error("MemoKey does not tell its parts apart")
	}
}
