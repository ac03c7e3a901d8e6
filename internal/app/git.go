package app

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// maxAttempts bounds how many times a branch is re-read when someone wrote in between.
const maxAttempts = 5

// Writer writes runs into an app GitOps repository.
type Writer struct {
	Repo *gitrepo.Repo
	// Author signs the commits (When is set at each commit).
	Author object.Signature
	// PullRequests, when set, puts each branch's change on a head branch and opens (or
	// updates) a pull request instead of moving the branch.
	PullRequests *PullRequests
	Logger       *slog.Logger
}

// Plan computes what Apply would change, writing nothing.
func (w *Writer) Plan(ctx context.Context, r *Run) (*Result, error) { return w.run(ctx, r, true) }

// Apply writes every target whose inputs changed, one commit per branch; nothing changed,
// no commit. A target that fails keeps what its folder had; the others are written.
func (w *Writer) Apply(ctx context.Context, r *Run) (*Result, error) { return w.run(ctx, r, false) }

func (w *Writer) run(ctx context.Context, r *Run, dry bool) (*Result, error) {
	res := newResult(r)
	byBranch := map[string][]*TargetRun{}
	for _, t := range r.Targets {
		byBranch[t.Target.Branch] = append(byBranch[t.Target.Branch], t)
	}
	results := map[string]TargetResult{}
	for _, branch := range slices.Sorted(maps.Keys(byBranch)) {
		br, trs, err := w.branch(ctx, r, branch, byBranch[branch], dry)
		if err != nil {
			return nil, err
		}
		for _, tr := range trs {
			results[tr.Target] = tr
		}
		if br.Commit != "" || br.PullRequest != nil {
			res.Branches = append(res.Branches, br)
		}
	}
	for _, t := range r.Targets {
		tr := results[t.Target.Name]
		if tr.Status == StatusChanged {
			res.NoChange = false
		}
		res.Targets = append(res.Targets, tr)
	}
	res.Warnings = r.In.App.Warnings()
	return res, nil
}

// branch writes the targets of one branch, re-reading it when someone wrote in between.
func (w *Writer) branch(ctx context.Context, r *Run, branch string, targets []*TargetRun, dry bool) (BranchResult, []TargetResult, error) {
	var br BranchResult
	var trs []TargetResult
	err := gitrepo.Retry(ctx, maxAttempts, branch, w.Logger, func(int) error {
		var err error
		br, trs, err = w.tryBranch(ctx, r, branch, targets, dry)
		return err
	})
	return br, trs, err
}

func (w *Writer) tryBranch(ctx context.Context, r *Run, branch string, targets []*TargetRun, dry bool) (BranchResult, []TargetResult, error) {
	br := BranchResult{Branch: branch, Targets: []string{}}
	tip, err := w.Repo.Tip(ctx, branch)
	if err != nil {
		return br, nil, err
	}
	tree, err := w.Repo.Edit(tip)
	if err != nil {
		return br, nil, err
	}
	trs := make([]TargetResult, 0, len(targets))
	for _, t := range targets {
		tr, err := updateTarget(ctx, r, tree, t)
		if err != nil {
			return br, nil, err
		}
		if tr.Status == StatusChanged {
			br.Targets = append(br.Targets, t.Target.Name)
		}
		trs = append(trs, tr)
	}
	if dry || len(br.Targets) == 0 {
		return br, trs, nil
	}
	msg := commitMessage(r, br.Targets)
	if w.PullRequests != nil {
		err = w.PullRequests.publish(ctx, w, r, &br, tree, tip, msg)
		return br, trs, err
	}
	sig := w.Author
	sig.When = now()
	commit, err := tree.Commit(tip, msg, sig)
	if err != nil {
		return br, nil, err
	}
	if err := w.Repo.Publish(ctx, branch, commit, tip); err != nil {
		return br, nil, err
	}
	br.Commit = commit.String()
	return br, trs, nil
}

// updateTarget brings a target's folder in the tree up to date: unchanged when the digest
// of its inputs is the one the folder records (nothing is rendered), else rendered and
// written, stale files removed.
func updateTarget(ctx context.Context, r *Run, tree *gitrepo.Tree, t *TargetRun) (TargetResult, error) {
	tr := targetResult(t)
	if t.Err != nil {
		tr.fail(t.Err)
		return tr, nil //nolint:nilerr // t.Err is the target's, reported in its result
	}
	dir := t.Target.Path
	if h, ok, err := tree.File(dir + "/" + DigestFile); err != nil {
		return tr, err
	} else if ok && h == gitrepo.BlobHash([]byte(t.Digest+"\n")) && !r.In.Regenerate {
		return tr, nil
	}
	folder, err := r.Render(ctx, t)
	if err != nil {
		tr.fail(err)
		return tr, nil //nolint:nilerr // a target that fails is reported in its result; the others go on
	}
	if !r.In.Regenerate {
		tr.Kept = folder.KeepCommitted(func(name string) ([]byte, bool) { return committedFile(tree, dir+"/"+name) })
	}
	files := folder.Files
	old, err := listTree(tree, dir)
	if err != nil {
		return tr, err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		action, _, err := tree.SetFile(dir+"/"+name, files[name])
		if err != nil {
			return tr, err
		}
		if action != gitrepo.Unchanged {
			tr.Changes = append(tr.Changes, Change{Path: dir + "/" + name, Action: string(action)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(old)) {
		if _, keep := files[name]; keep {
			continue
		}
		if _, err := tree.Remove(dir + "/" + name); err != nil {
			return tr, err
		}
		tr.Changes = append(tr.Changes, Change{Path: dir + "/" + name, Action: "delete"})
	}
	if len(tr.Changes) > 0 {
		tr.Status = StatusChanged
	}
	return tr, nil
}

// committedFile reads a file of the tree; a file it cannot read counts as none.
func committedFile(tree *gitrepo.Tree, p string) ([]byte, bool) {
	h, ok, err := tree.File(p)
	if err != nil || !ok {
		return nil, false
	}
	data, err := tree.Blob(h)
	return data, err == nil
}

// listTree lists the files below dir in the tree, by path relative to dir.
func listTree(tree *gitrepo.Tree, dir string) (map[string]plumbing.Hash, error) {
	out := map[string]plumbing.Hash{}
	var walk func(rel string) error
	walk = func(rel string) error {
		p := dir
		if rel != "" {
			p += "/" + rel
		}
		files, dirs, err := tree.List(p)
		if err != nil {
			return err
		}
		for _, f := range files {
			h, _, err := tree.File(p + "/" + f)
			if err != nil {
				return err
			}
			out[strings.TrimPrefix(rel+"/"+f, "/")] = h
		}
		for _, d := range dirs {
			if err := walk(strings.TrimPrefix(rel+"/"+d, "/")); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk("")
}

// commitMessage names the workload, the version, the environment and the targets.
func commitMessage(r *Run, targets []string) string {
	in := r.In
	version := in.Version
	if version == "" {
		version = "(no version)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Deploy %s %s to %s: %s\n\n", in.App.Workload.Metadata.Name, version, r.Env, strings.Join(targets, ", "))
	for _, kv := range [][2]string{{"Source commit", in.App.Commit}, {"Config commit", in.Config.Commit}, {"Image tag", in.ImageTag}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	return b.String()
}
