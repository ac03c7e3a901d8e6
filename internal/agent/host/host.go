// Package host is the agent of hosts without Kubernetes (VMs, edge boxes): it fetches its
// cluster type's folder of the GitOps repository, runs each deployment target's namespace
// then reconciler playbook with ansible-playbook, removes the targets that disappeared,
// and builds the hub.Report of what it applied.
//
// It runs git and ansible-playbook (the git CLI and ansible-core must be installed) and
// keeps its state in one folder: a bare clone of the repository, the copy of every
// target it applied (to clean it up once it disappears), and state.json.
package host

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// The playbooks of a deployment target folder, in the order they are applied (and the
// reverse order in which their cleanups run).
var playbooks = []string{"namespace.yaml", "reconciler.yaml"}

// Options configure an Agent.
type Options struct {
	// Cluster is the name the host is registered under on the hub.
	Cluster string
	// Repo is the GitOps repository (URL or path), Branch the environment's branch.
	Repo, Branch string
	// Path is the GitOpsRepo's folder inside the repository (default: the root).
	Path string
	// ClusterType is the host's cluster type: its folder is Path/ClusterType.
	ClusterType string
	// StateDir keeps the agent's state (required).
	StateDir string
	// Check runs Ansible in check mode: nothing changes and no state is recorded.
	Check bool
	// Resync re-applies a target that did not change when its last apply is older (drift
	// correction); 0 re-applies only what changed or failed.
	Resync time.Duration
	// AnsiblePlaybook is the ansible-playbook command (default "ansible-playbook").
	AnsiblePlaybook string
	// PlaybookTimeout bounds one playbook run (default 30m).
	PlaybookTimeout time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// Credentials choose the credential sent to Repo (an http(s) URL); nil sends none
	// (git's own credential helpers still apply).
	Credentials Credentials
}

// Agent applies a host's deployment targets.
type Agent struct {
	opts    Options
	fetch   *fetcher
	ansible ansible
}

// New checks opts and returns an Agent.
func New(opts Options) (*Agent, error) {
	switch {
	case opts.Cluster == "" || opts.Repo == "" || opts.Branch == "" || opts.ClusterType == "" || opts.StateDir == "":
		return nil, errors.New("host agent: the cluster, repository, branch, cluster type and state folder are required")
	case !filepath.IsLocal(filepath.FromSlash(path.Join(cmp.Or(opts.Path, "."), opts.ClusterType))):
		return nil, fmt.Errorf("host agent: %q is not a folder of the repository", path.Join(opts.Path, opts.ClusterType))
	}
	if opts.AnsiblePlaybook == "" {
		opts.AnsiblePlaybook = "ansible-playbook"
	}
	if opts.PlaybookTimeout <= 0 {
		opts.PlaybookTimeout = 30 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	stateDir, err := filepath.Abs(opts.StateDir)
	if err != nil {
		return nil, err
	}
	opts.StateDir = stateDir
	repo := opts.Repo
	if !strings.Contains(repo, "://") && !strings.Contains(repo, "@") {
		if repo, err = filepath.Abs(repo); err != nil {
			return nil, err
		}
	}
	return &Agent{
		opts:    opts,
		fetch:   &fetcher{dir: filepath.Join(stateDir, "gitops.git"), url: repo, branch: opts.Branch, creds: opts.Credentials},
		ansible: ansible{bin: opts.AnsiblePlaybook, home: filepath.Join(stateDir, "ansible"), check: opts.Check, timeout: opts.PlaybookTimeout},
	}, nil
}

// Folder is the cluster type's folder in the repository.
func (a *Agent) Folder() string { return path.Join(cmp.Or(a.opts.Path, "."), a.opts.ClusterType) }

// targetState is what the agent remembers of a deployment target.
type targetState struct {
	// Digest identifies the files last applied successfully; Revision is the commit they
	// were applied from, AppliedAt when.
	Digest    string    `json:"digest,omitempty"`
	Revision  string    `json:"revision,omitempty"`
	AppliedAt time.Time `json:"appliedAt"`
	// OK is false when the last attempt failed; Message says why.
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
}

type state struct {
	Targets map[string]targetState `json:"targets"`
}

// Cycle fetches the repository, applies the deployment targets that changed (all of them
// in check mode), cleans up those that disappeared, and returns the host's report. The
// report's status is NonCompliant when a target failed. An error means nothing was
// applied (the repository or the folder could not be read).
func (a *Agent) Cycle(ctx context.Context) (hub.Report, error) {
	commit, err := a.fetch.fetch(ctx)
	if err != nil {
		return hub.Report{}, fmt.Errorf("fetch %s: %w", a.opts.Branch, err)
	}
	checkout := filepath.Join(a.opts.StateDir, "checkout")
	if err := os.RemoveAll(checkout); err != nil {
		return hub.Report{}, err
	}
	if err := a.fetch.extract(ctx, commit, a.Folder(), checkout); err != nil {
		return hub.Report{}, err
	}
	targets, err := targetFolders(checkout)
	if err != nil {
		return hub.Report{}, err
	}
	st, err := a.loadState()
	if err != nil {
		return hub.Report{}, err
	}
	r := hub.Report{Cluster: a.opts.Cluster, Revision: commit, GitOpsPath: a.Folder()}
	var problems []string
	for _, t := range targets {
		d, problem := a.applyTarget(ctx, st, t, filepath.Join(checkout, t), commit)
		r.Deployments = append(r.Deployments, d)
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(st.Targets)) {
		if !slices.Contains(targets, t) {
			left, err := a.removeTarget(ctx, st, t)
			for _, l := range left {
				problems = append(problems, "cleanup of "+t+": "+l)
			}
			if err != nil {
				problems = append(problems, "cleanup of "+t+": "+err.Error())
			}
		}
	}
	if !a.opts.Check {
		if err := a.saveState(st); err != nil {
			return hub.Report{}, err
		}
	}
	r.Status = hub.Compliant
	for _, d := range r.Deployments {
		if d.Status == hub.Failed {
			r.Status = hub.NonCompliant
		}
	}
	r.Message = strings.Join(problems, "; ")
	r.ObservedAt = a.opts.Now()
	return r, nil
}

// applyTarget runs a target's playbooks when needed and returns its entry and, when it
// failed, why.
func (a *Agent) applyTarget(ctx context.Context, st *state, target, dir, commit string) (hub.DeploymentReport, string) {
	digest, err := folderDigest(dir)
	if err != nil {
		return hub.DeploymentReport{DeploymentTarget: target, Status: hub.Failed}, target + ": " + err.Error()
	}
	prev, known := st.Targets[target]
	now := a.opts.Now()
	fresh := a.opts.Resync <= 0 || now.Sub(prev.AppliedAt) < a.opts.Resync
	if known && prev.OK && prev.Digest == digest && fresh && !a.opts.Check {
		return hub.DeploymentReport{DeploymentTarget: target, Status: hub.Ready, Revision: commit}, ""
	}
	log := a.opts.Logger.With("target", target, "commit", commit, "check", a.opts.Check)
	var runErr error
	ran := 0
	for _, pb := range playbooks {
		p := filepath.Join(dir, pb)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		ran++
		if runErr = a.ansible.run(ctx, p); runErr != nil {
			break
		}
	}
	if ran == 0 {
		runErr = errors.New("no namespace.yaml or reconciler.yaml")
	}
	if runErr != nil {
		log.ErrorContext(ctx, "apply failed", "error", runErr.Error())
		prev.OK, prev.Message = false, runErr.Error()
		st.Targets[target] = prev
		// What it runs is still what it applied last.
		return hub.DeploymentReport{DeploymentTarget: target, Status: hub.Failed, Revision: prev.Revision}, target + ": " + runErr.Error()
	}
	log.InfoContext(ctx, "applied")
	if !a.opts.Check {
		if err := replaceDir(dir, a.appliedDir(target)); err != nil {
			return hub.DeploymentReport{DeploymentTarget: target, Status: hub.Failed}, target + ": keep a copy: " + err.Error()
		}
		st.Targets[target] = targetState{Digest: digest, Revision: commit, AppliedAt: now, OK: true}
	}
	return hub.DeploymentReport{DeploymentTarget: target, Status: hub.Ready, Revision: commit}, ""
}

// removeTarget cleans up a target that disappeared, from the copy of what was applied:
// the cleanup of its reconciler playbook, then of its namespace playbook (see
// cleanupPlaybook). The copy and the state go once the cleanup succeeded. It returns, as
// "<playbook>: left in place: <task and why>", the tasks that created something their
// cleanup does not remove (each is logged too).
func (a *Agent) removeTarget(ctx context.Context, st *state, target string) ([]string, error) {
	dir := a.appliedDir(target)
	work, err := os.MkdirTemp(a.opts.StateDir, "cleanup-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	if err := copyDir(dir, work); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var left []string
	for _, pb := range slices.Backward(playbooks) {
		data, err := os.ReadFile(filepath.Join(work, pb))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return left, err
		}
		c, err := cleanupPlaybook(data)
		if err != nil {
			return left, fmt.Errorf("%s: %w", pb, err)
		}
		for _, l := range c.left {
			a.opts.Logger.WarnContext(ctx, "the cleanup leaves what a task created in place", "target", target, "playbook", pb, "task", l)
			left = append(left, pb+": left in place: "+l)
		}
		if c.playbook == nil {
			continue
		}
		p := filepath.Join(work, "cleanup-"+pb)
		if err := os.WriteFile(p, c.playbook, 0o600); err != nil {
			return left, err
		}
		if err := a.ansible.run(ctx, p); err != nil {
			return left, err
		}
	}
	a.opts.Logger.InfoContext(ctx, "removed", "target", target, "check", a.opts.Check)
	if a.opts.Check {
		return left, nil
	}
	delete(st.Targets, target)
	return left, os.RemoveAll(dir)
}

func (a *Agent) appliedDir(target string) string {
	return filepath.Join(a.opts.StateDir, "applied", target)
}

func (a *Agent) loadState() (*state, error) {
	st := &state{Targets: map[string]targetState{}}
	data, err := os.ReadFile(filepath.Join(a.opts.StateDir, "state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(a.opts.StateDir, "state.json"), err)
	}
	if st.Targets == nil {
		st.Targets = map[string]targetState{}
	}
	return st, nil
}

func (a *Agent) saveState(st *state) error {
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(a.opts.StateDir, "state.json")
	if err := os.WriteFile(p+".tmp", append(data, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// targetFolders returns the deployment target folders of a cluster-type folder, sorted.
func targetFolders(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// folderDigest identifies the files of a folder (names and contents).
func folderDigest(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p) //nolint:gosec // dir is the agent's own copy under its state folder (folders 0700, regular files only: see extract)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(data))
		h.Write(data)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}

// replaceDir makes dst a copy of src.
func replaceDir(src, dst string) error {
	tmp := dst + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := copyDir(src, tmp); err != nil {
		return err
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		data, err := os.ReadFile(p) //nolint:gosec // src is the agent's own copy under its state folder (folders 0700, regular files only: see extract)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600) //nolint:gosec // target is dst joined with the path of a file WalkDir found under src
	})
}
