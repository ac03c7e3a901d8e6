package promote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// Hub is what a promotion asks of the observability hub.
type Hub interface {
	// Source returns the rollout of an environment's latest desired revision, the
	// control-plane commit it was rendered from, when it was posted, and the time of the
	// latest state change of its clusters since. hub.ErrNotFound (or a *hub.Error with
	// CodeNotFound) when there is no desired state.
	Source(ctx context.Context, env string) (SourceState, error)
	// Approved reports whether commit was approved for env.
	Approved(ctx context.Context, env, commit string) (bool, error)
	// Approvers name the distinct identities that approved commit for env (with
	// distinctFromAuthor, not the change's author).
	Approvers(ctx context.Context, env, commit string, distinctFromAuthor bool) ([]string, error)
	// Record appends an event to the hub's history.
	Record(ctx context.Context, e hub.Event) error
}

// SourceState is a source environment as the hub sees it.
type SourceState struct {
	Rollout         hub.Rollout
	DesiredCommit   string
	DesiredPostedAt time.Time
	LastChange      time.Time
}

// Request is one promotion.
type Request struct {
	ControlPlane *controlplane.ControlPlane
	To           string
	// Commit is the control-plane commit (or ref) to promote; empty: the source's pin, or
	// for a first environment the tip of the common content.
	Commit string
	// Override promotes despite unmet gates; Reason is required and recorded.
	Override bool
	Reason   string
	// Actor is who asked (recorded).
	Actor string
	// By is who asked and why the access policies allowed it, for the history (nil: not
	// known; a hub behind its API then records the token used).
	By  *hub.Actor
	Now time.Time
	// QuietRefusal leaves a refusal unrecorded (the watcher records only changes).
	QuietRefusal bool
	// Round, when set, is the pass over the chain this promotion is part of: its
	// environments, chain and snapshots are read once (nil: read them for this promotion).
	Round *Round
}

// Result is what a promotion did.
type Result struct {
	Promoted bool     `json:"promoted"`
	To       string   `json:"to"`
	From     string   `json:"from,omitempty"`
	Commit   string   `json:"commit"`
	Reasons  []string `json:"reasons"`
	// Overridden lists the gates an override skipped.
	Overridden []string `json:"overridden,omitempty"`
	// PinCommit is the control-plane commit that wrote the pin ("" when the pin was
	// already there).
	PinCommit string `json:"pinCommit,omitempty"`
}

// StatusReporter sets commit statuses on the control-plane repository's forge.
type StatusReporter interface {
	SetStatus(ctx context.Context, commit string, s forge.CommitStatus) error
}

// Promoter promotes control-plane commits along the chain.
type Promoter struct {
	Git    *gitops.Writer
	Hub    Hub // nil: gates that need the hub fail
	Logger *slog.Logger
	// Statuses, when set, gets a commit status per decision on the promoted commit (context
	// "<env> environment"): success when promoted, pending with the first reason when refused.
	Statuses StatusReporter
	// Author of the pin commits.
	Commit gitops.CommitOptions
}

// Promote checks the gates for promoting a commit into req.To and, when they pass (or are
// overridden), pins the commit in the control plane. Refusals change nothing.
func (p *Promoter) Promote(ctx context.Context, req Request) (Result, error) {
	cp := req.ControlPlane
	round := req.Round
	if round == nil {
		var err error
		if round, err = NewRound(ctx, cp); err != nil {
			return Result{}, err
		}
	}
	g, ok := round.Chain.Gates[req.To]
	if !ok {
		return Result{}, fmt.Errorf("environment %q is not declared", req.To)
	}
	res := Result{To: req.To, From: g.From, Reasons: []string{}}
	ev, err := p.evidence(ctx, round, g, req)
	if err != nil {
		return res, err
	}
	res.Commit = ev.Commit
	reasons := Check(g, ev)
	if len(reasons) > 0 && !req.Override {
		res.Reasons = reasons
		if !req.QuietRefusal {
			p.record(ctx, req, res, "refused: "+strings.Join(reasons, "; "))
		}
		return res, nil
	}
	if req.Override {
		if strings.TrimSpace(req.Reason) == "" {
			return res, errors.New("--override needs --reason: overrides are recorded")
		}
		res.Overridden = reasons
	}
	if res.PinCommit, err = p.pin(ctx, cp, round.Envs, req, ev.Commit, reasons); err != nil {
		return res, err
	}
	res.Promoted = true
	p.record(ctx, req, res, p.summary(req, res))
	return res, nil
}

// evidence gathers what the gates are checked against.
func (p *Promoter) evidence(ctx context.Context, round *Round, g Gates, req Request) (Evidence, error) {
	cp := round.ControlPlane
	ev := Evidence{Now: req.Now, Commit: req.Commit}
	if g.From == "" {
		if ev.Commit == "" {
			tip, err := cp.CommonTip()
			if err != nil {
				return ev, err
			}
			ev.Commit = tip
		}
		commit, err := cp.ResolveCommit(ev.Commit)
		ev.Commit = commit
		if err == nil && p.Hub != nil {
			err = p.approvals(ctx, g, &ev)
		}
		return ev, err
	}
	src, err := round.Snapshot(ctx, g.From)
	if err != nil {
		return ev, err
	}
	ev.SourcePin = src.Revisions.Common
	if ev.Commit == "" {
		ev.Commit = ev.SourcePin
	}
	if ev.Commit, err = cp.ResolveCommit(ev.Commit); err != nil {
		return ev, err
	}
	if ev.SourceGitOpsCommit, err = p.gitopsCommit(ctx, cp, src); err != nil {
		return ev, err
	}
	if p.Hub == nil {
		return ev, nil
	}
	st, err := p.Hub.Source(ctx, g.From)
	switch {
	case hub.ErrorCode(err) == hub.CodeNotFound:
	case err != nil:
		return ev, fmt.Errorf("ask the hub about %s: %w", g.From, err)
	default:
		ev.Rollout, ev.DesiredCommit, ev.DesiredPostedAt, ev.LastChange = &st.Rollout, st.DesiredCommit, st.DesiredPostedAt, st.LastChange
	}
	return ev, p.approvals(ctx, g, &ev)
}

// approvals asks the hub whether the commit was approved as the gates need.
func (p *Promoter) approvals(ctx context.Context, g Gates, ev *Evidence) error {
	var err error
	switch {
	case !g.Approval:
	case g.FourEyes():
		ev.Approvers, err = p.Hub.Approvers(ctx, g.Environment, ev.Commit, g.DistinctFromAuthor)
		ev.Approved = len(ev.Approvers) >= g.Approvals
	default:
		ev.Approved, err = p.Hub.Approved(ctx, g.Environment, ev.Commit)
	}
	return err
}

// gitopsCommit reads the control-plane commit an environment's GitOps branch was rendered
// from: its Promoted_Commit_Id when the environment is pinned, else what fleetform's state
// records (an unpinned environment has no Promoted_Commit_Id, as in Kalypso).
func (p *Promoter) gitopsCommit(ctx context.Context, cp *controlplane.ControlPlane, s *controlplane.Snapshot) (string, error) {
	t := gitops.TargetOf(cp, s, gitops.Target{})
	if t.Repo == "" {
		return "", nil
	}
	content, _, ok, err := p.Git.ReadFile(ctx, t.Repo, t.Branch, t.File(render.PromotedCommitFile))
	if err != nil || ok {
		return strings.TrimSpace(string(content)), err
	}
	index, _, ok, err := p.Git.ReadFile(ctx, t.Repo, t.Branch, t.File(gitops.IndexFile))
	if err != nil || !ok {
		return "", err
	}
	return gitops.RenderedCommit(index)
}

// pin writes the commit into the environment's base-repo.yaml.
func (p *Promoter) pin(ctx context.Context, cp *controlplane.ControlPlane, envs []controlplane.EnvironmentInfo, req Request, commit string, skipped []string) (string, error) {
	var info controlplane.EnvironmentInfo
	for _, e := range envs {
		if e.Name == req.To {
			info = e
		}
	}
	loc, err := cp.PinLocation(info)
	if err != nil {
		return "", err
	}
	msg := fmt.Sprintf("Promote %s to %s\n\n", short(commit), req.To)
	if req.Override {
		msg += fmt.Sprintf("Overridden gates (%s): %s\n\n", req.Reason, strings.Join(skipped, "; "))
	}
	msg += fmt.Sprintf("Fleetform-Promotion: %s\nPromoted-Commit: %s\n", req.To, commit)
	if req.Actor != "" {
		msg += "Promoted-By: " + req.Actor + "\n"
	}
	var refused error // the file cannot take the pin
	edit := func(old []byte) ([]byte, error) {
		content, err := baseRepoYAML(old, commit)
		if err != nil {
			refused = fmt.Errorf("%s on %s: %w", loc.File, loc.Branch, err)
		}
		return content, refused
	}
	h, err := p.Git.EditFile(ctx, loc.Repo, loc.Branch, loc.File, edit, msg, p.Commit)
	if refused != nil {
		return "", refused
	}
	if err != nil {
		return "", fmt.Errorf("write the pin: %w", err)
	}
	if h.IsZero() {
		return "", nil
	}
	return h.String(), nil
}

// baseRepoYAML sets spec.commit of an existing base-repo.yaml, keeping everything else
// (comments, order, other fields), or writes a new one in Kalypso's shape.
func baseRepoYAML(old []byte, commit string) ([]byte, error) {
	if len(bytes.TrimSpace(old)) == 0 {
		return fmt.Appendf(nil, `# Pinned by fleetform promote: the common content this environment renders.
apiVersion: %s
kind: %s
metadata:
  name: %s
spec:
  branch: main
  path: .
  commit: %s
`, v1alpha1.APIVersion, v1alpha1.KindBaseRepo, v1alpha1.BaseRepoName, commit), nil
	}
	doc, err := oneDocument(old)
	if err != nil {
		return nil, err
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("not a BaseRepo document")
	}
	spec := mappingValue(doc.Content[0], "spec")
	if spec == nil {
		spec = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		doc.Content[0].Content = append(doc.Content[0].Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "spec"}, spec)
	}
	if spec.Kind != yaml.MappingNode {
		return nil, errors.New("spec is not a mapping")
	}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: commit}
	c := mappingValue(spec, "commit")
	if spec.Anchor != "" || (c != nil && c.Anchor != "") {
		return nil, errors.New("spec or spec.commit is an anchor (&name) that other places may use, and the pin would " +
			"change them too: write it without the anchor")
	}
	if c != nil {
		*c = *value
	} else {
		spec.Content = append(spec.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "commit"}, value)
	}
	return yamlnode.Encode(doc)
}

// oneDocument decodes the first document of data, which must be its only one (empty
// documents after it hold nothing to lose).
func oneDocument(data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	for {
		var next yaml.Node
		err := dec.Decode(&next)
		if errors.Is(err, io.EOF) {
			return &doc, nil
		}
		if err != nil {
			return nil, err
		}
		if n := next.Content; len(n) > 0 && (n[0].Kind != yaml.ScalarNode || n[0].Tag != "!!null") {
			return nil, fmt.Errorf("line %d: a second document: the pin is written as the file's one BaseRepo document; "+
				"move the other documents to a file of their own", next.Line)
		}
	}
}

// mappingValue returns the value of key in a mapping node, or nil.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

func (p *Promoter) summary(req Request, res Result) string {
	s := fmt.Sprintf("promoted %s to %s", short(res.Commit), req.To)
	if req.Override {
		s = fmt.Sprintf("override: promoted %s to %s despite %d unmet gate(s): %s", short(res.Commit), req.To, len(res.Overridden), req.Reason)
	}
	return s
}

// record puts the decision in the hub's history and on the forge (best effort: a
// promotion does not fail because the hub or the forge is down; the decision is reported
// either way).
func (p *Promoter) record(ctx context.Context, req Request, res Result, msg string) {
	if req.Actor != "" {
		msg += " (by " + req.Actor + ")"
	}
	if p.Hub != nil {
		events := []hub.Event{{Time: req.Now, Kind: hub.EventPromotion, Environment: req.To, Revision: res.Commit, Message: msg,
			From: res.From, To: req.To, Actor: req.By}}
		if req.Override && res.Promoted && len(res.Overridden) > 0 {
			events = append(events, hub.Event{Time: req.Now, Kind: hub.EventOverride, Environment: req.To, Revision: res.Commit,
				From: res.From, To: req.To, Actor: req.By,
				Message: fmt.Sprintf("overrode %s: %s (reason: %s)", pluralGates(len(res.Overridden)), strings.Join(res.Overridden, "; "), req.Reason)})
		}
		for _, ev := range events {
			if err := p.Hub.Record(ctx, ev); err != nil {
				p.warn(ctx, "recording the "+ev.Kind+" in the hub", err)
			}
		}
	}
	if p.Statuses != nil && res.Commit != "" {
		st := forge.CommitStatus{State: forge.StatusSuccess, Context: forge.EnvironmentContext(req.To), Description: msg}
		if !res.Promoted {
			st.State, st.Description = forge.StatusPending, "waiting: "+strings.Join(res.Reasons, "; ")
		}
		if err := p.Statuses.SetStatus(ctx, res.Commit, st); err != nil {
			p.warn(ctx, "setting the commit status", err)
		}
	}
}

func pluralGates(n int) string {
	if n == 1 {
		return "1 gate"
	}
	return fmt.Sprintf("%d gates", n)
}

func (p *Promoter) warn(ctx context.Context, what string, err error) {
	if p.Logger != nil {
		p.Logger.WarnContext(ctx, what, "error", err.Error())
	}
}
