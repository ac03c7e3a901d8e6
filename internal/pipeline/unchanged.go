package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/repourl"
)

// Memos remember, per apply (control plane, environment and options), the last apply that
// ended clean: the trees its load read and their identities, the GitOps branch tip it left,
// and what an apply with nothing changed reports there. While every one of those trees has
// its identity, the fleetform build is the same and the branch is still at that tip, the
// apply's output is known without loading anything: nothing changed. A memo is a local
// cache: losing it costs one full apply.
type Memos struct {
	dir    string
	logger *slog.Logger
}

// NewMemos returns the memos kept in dir (created when first needed).
func NewMemos(dir string, logger *slog.Logger) *Memos {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Memos{dir: dir, logger: logger}
}

// MemoKey names the memo of one apply from everything that chooses what it reads and where
// it writes (the control plane's location, the environment, the flags, the working
// directory relative paths are resolved from).
func MemoKey(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TipReader reads a GitOps branch's tip (zero when the branch does not exist).
type TipReader interface {
	Tip(ctx context.Context, repo, branch string) (plumbing.Hash, error)
}

const memoFormat = "fleetform-unchanged 1"

// memo is one memo's file.
type memo struct {
	Format  string                   `json:"format"`
	Build   string                   `json:"build"`
	Context string                   `json:"context"`
	Inputs  []controlplane.InputTree `json:"inputs"`
	Target  gitops.Target            `json:"target"`
	Tip     string                   `json:"tip"`
	Report  PlanReport               `json:"report"`
}

// Unchanged returns what an apply with nothing changed reports, when the memo under key
// still holds for cp (freshly opened) and the GitOps branch. Any doubt (no memo, another
// build, a tree or the tip moved, an error) answers false: the caller applies in full.
func (m *Memos) Unchanged(ctx context.Context, key string, cp *controlplane.ControlPlane, tips TipReader) (*PlanReport, bool) {
	data, err := os.ReadFile(m.file(key))
	if err != nil {
		return nil, false
	}
	var mm memo
	if err := json.Unmarshal(data, &mm); err != nil || mm.Format != memoFormat {
		return nil, false
	}
	if mm.Build != buildIdentity() || mm.Context != cp.ReadContext() || !cp.SameInputs(ctx, mm.Inputs) {
		return nil, false
	}
	tip, err := tips.Tip(ctx, mm.Target.Repo, mm.Target.Branch)
	if err != nil || tip.IsZero() || tip.String() != mm.Tip {
		return nil, false
	}
	m.logger.DebugContext(ctx, "nothing changed since the last apply", "environment", mm.Report.Environment, "tip", mm.Tip)
	return &mm.Report, true
}

// Remember records an apply that ended clean (no diagnostics, nothing failed, deferred,
// waiting or refused, published to the target branch itself) under key; any other apply
// forgets the memo. doc is the apply's report. Recording is best effort: a cache that
// cannot be written is logged, never an error.
func (m *Memos) Remember(key string, r *Run, a *Applied, doc PlanReport) {
	mm, ok := memoOf(r, a, doc)
	if !ok {
		if err := os.Remove(m.file(key)); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.logger.Warn("cannot remove the memo of the last apply", "error", err.Error())
		}
		return
	}
	data, err := json.Marshal(mm)
	if err == nil {
		err = writeFileAtomic(m.file(key), data)
	}
	if err != nil {
		m.logger.Warn("cannot record the apply for the next one (it will load everything)", "error", err.Error())
	}
}

// memoOf builds the memo of a clean apply.
func memoOf(r *Run, a *Applied, doc PlanReport) (memo, bool) {
	if a == nil || a.Result == nil || a.Result.Plan == nil || a.PullRequest != nil || a.HubErr != nil || !clean(doc) {
		return memo{}, false
	}
	res, p := a.Result, a.Result.Plan
	tip := p.Base
	if !res.Commit.IsZero() {
		if res.Branch != p.Target.Branch {
			return memo{}, false
		}
		tip = res.Commit
	}
	if tip.IsZero() || !canRemember(r.Snapshot.Inputs, p.Target) {
		return memo{}, false
	}
	// What an apply reports when it finds nothing to do at tip.
	noop := doc
	noop.Base = tip.String()
	noop.Changes, noop.AssignmentsAdded, noop.AssignmentsRemoved = []ChangeReport{}, []gitops.AssignmentRef{}, []gitops.AssignmentRef{}
	noop.ClusterTypesAffected = []string{}
	noop.Skipped, noop.Rendered = doc.Skipped+doc.Rendered, 0
	return memo{Format: memoFormat, Build: buildIdentity(), Context: r.ControlPlane.ReadContext(), Inputs: r.Snapshot.Inputs,
		Target: p.Target, Tip: tip.String(), Report: noop}, true
}

// clean reports whether an apply's report holds nothing but its result.
func clean(doc PlanReport) bool {
	return len(doc.Errors) == 0 && len(doc.Warnings) == 0 && len(doc.Failed) == 0 && len(doc.Deferred) == 0 &&
		len(doc.Waiting) == 0 && doc.MassDelete == nil
}

// canRemember refuses a memo that would write a credential to disk (a URL with a user or
// a password in it).
func canRemember(inputs []controlplane.InputTree, t gitops.Target) bool {
	if repourl.Redact(t.Repo) != t.Repo {
		return false
	}
	for _, in := range inputs {
		if repourl.Redact(in.Repo) != in.Repo {
			return false
		}
	}
	return true
}

// buildIdentity names this fleetform: its build stamp, and its executable's size and
// modification time (a rebuilt binary of the same revision is another build).
func buildIdentity() string {
	id := render.BuildStamp()
	if exe, err := os.Executable(); err == nil {
		if fi, err := os.Stat(exe); err == nil {
			id += " " + strconv.FormatInt(fi.Size(), 10) + " " + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
		}
	}
	return id
}

func (m *Memos) file(key string) string { return filepath.Join(m.dir, key) }

// writeFileAtomic writes data to name through a temporary file renamed over it, readable by
// the user only.
func writeFileAtomic(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		_ = os.Remove(f.Name()) // best effort: the temporary file is ours
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}
