package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/repourl"
)

// ChangesHub is what the authoring API needs of the hub: who a token is, and the history
// every committed change is recorded in (*hub.Hub).
type ChangesHub interface {
	Authenticate(ctx context.Context, token string) (hub.Principal, error)
	RecordChange(ctx context.Context, c hub.Change) error
}

// ChangesOptions configure the authoring API.
type ChangesOptions struct {
	// Fleet is the control plane changed (a directory, a local git repository or a URL, as
	// serve's --control-plane), how it is read, and who commits.
	Fleet *fleet.Fleet
	// Hub authenticates the callers of the HTTP handler and records the history.
	Hub ChangesHub
	// Mode is what is done with a change (serve --authoring): authoring.ModeCommit (a local
	// control plane's default; a plain directory is written), authoring.ModePush or
	// authoring.ModePR (a remote one's default).
	Mode authoring.Mode
	// Applied is called after a change was committed, so that it is applied at once (the
	// service's Trigger of the control plane). Nil: nothing is called.
	Applied func()
	Logger  *slog.Logger
}

// ControlPlaneChanges makes changes of the control plane for the authoring API and the web
// UI: validated, planned, then committed, pushed (a remote control plane, changed on
// serve's mirror of it) or proposed as a pull request, and recorded in the hub's history
// with who made them. Changes made through one ControlPlaneChanges are made one at a time
// (on a remote control plane, dry runs too: they share the mirror); against other writers
// (the CLI, a push) a commit or a push moves its branch with a compare-and-swap and the
// change is made again on the latest commit, up to 3 times, then fails with
// authoring.ErrConflict: a change is never lost.
type ControlPlaneChanges struct {
	opts ChangesOptions
	mu   sync.Mutex // one committed change at a time
}

// NewControlPlaneChanges returns the authoring API over opts.
func NewControlPlaneChanges(opts ChangesOptions) *ControlPlaneChanges {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &ControlPlaneChanges{opts: opts}
}

// Change makes (or with dryRun only validates and plans) a change of the control plane for
// id: refused with an access.DeniedError unless the access policies allow what it touches.
func (c *ControlPlaneChanges) Change(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error) {
	if len(ops) == 0 {
		return nil, errors.New("no operations")
	}
	actor := id.Actor()
	if actor == "" {
		return nil, errors.New("a change needs the name of who makes it")
	}
	var decision access.Decision
	req := fleet.AuthorRequest{Operations: ops, Actor: actor, Identity: &id, Decision: &decision}
	remote := c.remote()
	switch {
	case dryRun:
		req.Mode = authoring.ModeDryRun
		if !remote {
			return c.opts.Fleet.Author(ctx, req)
		}
	case c.opts.Mode == authoring.ModePR, c.opts.Mode == authoring.ModePush:
		req.Mode = c.opts.Mode
	case remote:
		req.Mode = authoring.ModePR
	default:
		// A git repository is committed to; a plain directory is written.
		req.Mode = authoring.ModeCommit
		if !c.isGit(ctx) {
			req.Mode = authoring.ModeWrite
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := c.opts.Fleet.Author(ctx, req)
	if fleet.IsForbidden(err) {
		c.recordRefusal(ctx, ops, id, decision)
	}
	if err != nil || !res.Written {
		return res, err
	}
	c.opts.Logger.InfoContext(ctx, "control plane changed", "by", actor, "operations", strings.Join(res.Operations, "; "))
	if c.opts.Hub != nil {
		rec := changeRecord(ops, res, actor)
		rec.Actor = hub.ActorOf(id, decision)
		if herr := c.record(ctx, rec, "a change"); herr != nil {
			// The change is in git, the source of truth: say so, do not fail it.
			res.Notes = append(res.Notes, "the change is made, but the hub's history could not record it: "+herr.Error())
		}
	}
	if c.opts.Applied != nil && res.PullRequest == nil {
		c.opts.Applied()
	}
	return res, nil
}

// CanPropose reports whether changes can be proposed as pull requests: the control plane
// is a URL, or a forge is configured for its origin.
func (c *ControlPlaneChanges) CanPropose() bool {
	return c.remote() || c.opts.Fleet.Config().ForgeURL != ""
}

// Propose proposes a change as a pull request for id (with dryRun, validates and plans it
// only), whether or not the access policies let id make it: the pull request's reviewers
// decide. It is recorded in the hub's history as proposed by id.
func (c *ControlPlaneChanges) Propose(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error) {
	if len(ops) == 0 || id.Actor() == "" {
		return nil, errors.New("a proposal needs operations and who makes it")
	}
	req := fleet.AuthorRequest{Operations: ops, Actor: id.Actor(), Identity: &id, Propose: true, Mode: authoring.ModePR}
	if dryRun {
		req.Mode = authoring.ModeDryRun
		return c.opts.Fleet.Author(ctx, req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := c.opts.Fleet.Author(ctx, req)
	if err != nil || !res.Written || c.opts.Hub == nil {
		return res, err
	}
	rec := changeRecord(ops, res, id.Actor())
	rec.What = "proposed: " + rec.What
	rec.Actor = hub.ActorOf(id, access.Decision{Allowed: true, Reason: "a proposal: the pull request's reviewers decide"})
	_ = c.record(ctx, rec, "a proposal")
	return res, nil
}

// recordRefusal puts a change the access policies refused in the hub's history, with who
// asked and why it was refused (the audit of attempts).
func (c *ControlPlaneChanges) recordRefusal(ctx context.Context, ops []authoring.Operation, id access.Identity, d access.Decision) {
	if c.opts.Hub == nil {
		return
	}
	what := make([]string, len(ops))
	for i, op := range ops {
		what[i] = strings.TrimSpace(op.Op + " " + op.Kind + " " + op.Name)
	}
	rec := hub.Change{By: id.Actor(), What: "refused: " + strings.Join(what, "; ") + ": " + d.Reason, Actor: hub.ActorOf(id, d)}
	_ = c.record(ctx, rec, "a refused change")
}

// record puts rec in the hub's history, even when the request was cancelled meanwhile; a
// failure is logged (and returned): git, the source of truth, has the change.
func (c *ControlPlaneChanges) record(ctx context.Context, rec hub.Change, what string) error {
	err := c.opts.Hub.RecordChange(context.WithoutCancel(ctx), rec)
	if err != nil {
		c.opts.Logger.ErrorContext(ctx, "recording "+what+" in the history", "error", err.Error())
	}
	return err
}

// remote reports whether the control plane is a URL: changed on serve's mirror of it.
func (c *ControlPlaneChanges) remote() bool {
	_, local := repourl.LocalPath(c.opts.Fleet.Config().ControlPlane)
	return !local
}

// isGit reports whether the control plane is a git repository.
func (c *ControlPlaneChanges) isGit(ctx context.Context) bool {
	cfg := c.opts.Fleet.Config()
	p, ok := repourl.LocalPath(cfg.ControlPlane)
	if !ok {
		return true // refused by authoring as not local
	}
	read := cfg.Read
	read.Logger = nil
	cp, err := controlplane.Open(ctx, p, read)
	return err != nil || cp.Repo().IsGit()
}

// changeRecord is the history's event of a change made.
func changeRecord(ops []authoring.Operation, res *authoring.Result, actor string) hub.Change {
	c := hub.Change{By: actor, What: strings.Join(res.Operations, "; ")}
	if len(res.Commits) > 0 {
		c.Revision = res.Commits[0].Commit
	}
	if res.PullRequest != nil {
		c.PullRequest = res.PullRequest.URL
	}
	env := ops[0].Env
	for _, op := range ops {
		if op.Env != env || op.Kind == authoring.KindDeploymentTarget || op.Kind == v1alpha1.KindWorkload ||
			op.Kind == v1alpha1.KindWorkloadRegistration || op.Kind == v1alpha1.KindEnvironment {
			env = "" // common content, or several environments
		}
	}
	c.Environment = env
	return c
}

// ChangesRequest is the body of POST /api/v1/controlplane/changes.
type ChangesRequest struct {
	Operations []authoring.Operation `json:"operations"`
}

// maxChangesBody bounds the body of a change.
const maxChangesBody = 1 << 20

// Handler answers POST /api/v1/controlplane/changes[?dryRun=true] with the admin token, or a
// read-only token the access policies grant the change to: 200 and the authoring.Result;
// 422 and the Result with its errors when the change is refused; 409 when the control
// plane kept moving; 400 for a malformed request; 401 without a token; 403 with the reason
// when the token may not make the change.
func (c *ControlPlaneChanges) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
			return
		}
		id, ok := c.authorize(w, r)
		if !ok {
			return
		}
		dryRun := false
		if v := r.URL.Query().Get("dryRun"); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, string(hub.CodeInvalid), fmt.Sprintf("dryRun=%q: want true or false", v))
				return
			}
			dryRun = b
		}
		var body ChangesRequest
		dec := json.NewDecoder(io.LimitReader(r.Body, maxChangesBody+1))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			writeError(w, http.StatusBadRequest, string(hub.CodeInvalid), "body: "+err.Error()+` (want {"operations":[{"op","kind","name",...}]}, at most 1 MiB)`)
			return
		}
		if dec.More() {
			writeError(w, http.StatusBadRequest, string(hub.CodeInvalid), "body: one JSON object only")
			return
		}
		if len(body.Operations) == 0 {
			writeError(w, http.StatusBadRequest, string(hub.CodeInvalid), "operations: at least one is required")
			return
		}
		res, err := c.Change(r.Context(), body.Operations, dryRun, id)
		switch {
		case fleet.IsForbidden(err):
			writeError(w, http.StatusForbidden, string(hub.CodeForbidden), err.Error())
		case errors.Is(err, authoring.ErrInvalid) && res != nil:
			writeJSON(w, http.StatusUnprocessableEntity, res)
		case errors.Is(err, authoring.ErrConflict):
			writeError(w, http.StatusConflict, string(hub.CodeConflict),
				"the control plane changed while the change was being made, every time it was tried: nothing was written; send it again ("+err.Error()+")")
		case err != nil && r.Context().Err() != nil:
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the request was cancelled")
		case err != nil:
			msg := repourl.RedactText(err.Error())
			c.opts.Logger.ErrorContext(r.Context(), "control plane change failed", "by", id.Actor(), "error", msg)
			writeError(w, http.StatusInternalServerError, string(hub.CodeInternal), "the change failed: "+msg)
		default:
			writeJSON(w, http.StatusOK, res)
		}
	})
}

// authorize authenticates the caller: an admin token, or a read-only token whose name the
// access policies may grant changes to (Change judges each change).
func (c *ControlPlaneChanges) authorize(w http.ResponseWriter, r *http.Request) (access.Identity, bool) {
	if c.opts.Hub == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "no hub to authenticate with")
		return access.Identity{}, false
	}
	scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		token = ""
	}
	p, err := c.opts.Hub.Authenticate(r.Context(), strings.TrimSpace(token))
	var he *hub.Error
	switch {
	case errors.As(err, &he) && he.Code == hub.CodeUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="fleetform-hub"`)
		writeError(w, http.StatusUnauthorized, string(he.Code), he.Message)
		return access.Identity{}, false
	case err != nil:
		c.opts.Logger.ErrorContext(r.Context(), "authenticating a change", "error", err.Error())
		writeError(w, http.StatusInternalServerError, string(hub.CodeInternal), "internal error")
		return access.Identity{}, false
	case !p.MayRead():
		writeError(w, http.StatusForbidden, string(hub.CodeForbidden), "changing the control plane needs the admin token, or a read-only token or a person its access policies grant changes to")
		return access.Identity{}, false
	}
	return p.Identity(), true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// ClusterManifests is what a new cluster of clusterType in env needs (its reconciler's
// objects, and the reporting agent's reporting to hubURL), for the web UI: it registers
// nothing and carries a placeholder instead of the token, which only `fleetform onboard
// cluster` prints.
func (c *ControlPlaneChanges) ClusterManifests(ctx context.Context, name, env, clusterType, reconciler, hubURL string) (*authoring.ClusterBootstrap, error) {
	return c.opts.Fleet.OnboardCluster(ctx, fleet.OnboardClusterRequest{Name: name, Environment: env, ClusterType: clusterType,
		Reconciler: reconciler, HubURL: hubURL}, nil)
}
