package fleet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// Init creates a control plane (authoring.Init): it needs none to start from.
func Init(ctx context.Context, o authoring.InitOptions) (*authoring.InitResult, error) {
	return authoring.Init(ctx, o)
}

// OnboardAppRequest registers an application repository.
type OnboardAppRequest struct {
	Name, Repo, Workspace, Branch string
	// Targets are the deployment targets of the starting workload.yaml.
	Targets []AppTarget
	// AppDir is the application repository's work tree, where workload/workload.yaml is
	// written, or kept and validated as it is when it exists ("": nowhere; the registration
	// alone is validated).
	AppDir  string
	Mode    authoring.Mode
	Message string
}

// AppTarget is a deployment target of a new application.
type AppTarget struct{ Name, Environment string }

// WorkloadFolder is where OnboardApp writes workload.yaml in the application repository, and
// the path its WorkloadRegistration reads (Kalypso's sample layout).
const WorkloadFolder = "workload"

// OnboardApp adds the WorkloadRegistration of an application's repository (Author) and
// writes a starting workload.yaml with its deployment targets into req.AppDir. A
// workload.yaml already there is never replaced: it is kept as it is, and it is the one
// validated. The workload is validated from a copy, so that the plan shows where its
// targets land.
func (f *Fleet) OnboardApp(ctx context.Context, req OnboardAppRequest) (*authoring.Result, error) {
	content, kept, err := existingWorkload(req.AppDir)
	if err != nil {
		return nil, err
	}
	if !kept {
		content = workloadYAML(req)
	}
	tmp, err := os.MkdirTemp("", "fleetform-onboard-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := createWorkload(tmp, content); err != nil {
		return nil, err
	}
	with := *f
	if req.AppDir != "" {
		with.cfg.Read.RepoMap = maps.Clone(f.cfg.Read.RepoMap)
		if with.cfg.Read.RepoMap == nil {
			with.cfg.Read.RepoMap = map[string]string{}
		}
		with.cfg.Read.RepoMap[req.Repo] = tmp // read the workload.yaml from the copy
	}
	op := authoring.AddRegistration(req.Name, req.Repo, req.Branch, "./"+WorkloadFolder, req.Workspace)
	res, err := with.Author(ctx, AuthorRequest{Operations: []authoring.Operation{op}, Mode: req.Mode, Message: req.Message})
	p := workloadPath(req.AppDir)
	switch {
	case kept && res != nil:
		note := "kept " + p + " as it is: it exists, and it is the workload validated and planned"
		if len(req.Targets) > 0 {
			note += " (--target is not written into it: add deployment targets to it by hand)"
		}
		res.Notes = append(res.Notes, note)
	case !kept && err == nil && req.AppDir != "" && req.Mode != authoring.ModeDryRun:
		werr := createWorkload(req.AppDir, content)
		if errors.Is(werr, fs.ErrExist) {
			return res, fmt.Errorf("%s was created while onboard app ran: it is kept, and the registration was validated with the starting workload instead (validate with that file: fleetform validate --repo-map %s=%s)", p, req.Repo, req.AppDir)
		}
		if werr != nil {
			return res, werr
		}
		res.Notes = append(res.Notes, "wrote "+p+": commit it in the application's repository")
	}
	return res, err
}

// workloadPath is where the workload.yaml of the application repository in dir is.
func workloadPath(dir string) string { return filepath.Join(dir, WorkloadFolder, "workload.yaml") }

// existingWorkload returns the workload.yaml in the application repository's work tree dir,
// and whether there is one.
func existingWorkload(dir string) ([]byte, bool, error) {
	if dir == "" {
		return nil, false, nil
	}
	p := workloadPath(dir)
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("%s exists and cannot be read: %w (onboard app keeps and validates an existing workload.yaml: make it a readable file, or remove it to have a starting one written)", p, err)
	}
	return b, true, nil
}

// workloadYAML is the starting workload.yaml of a new application.
func workloadYAML(req OnboardAppRequest) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# The %s workload, registered by `fleetform onboard app`. Each deployment target is where\n"+
		"# the application runs in one environment; point its manifests at the folder (and branch) of\n"+
		"# its Kubernetes manifests, and give it labels the platform's scheduling policies select.\n", req.Name)
	fmt.Fprintf(&b, "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: %s\nspec:\n  deploymentTargets:", req.Name)
	if len(req.Targets) == 0 {
		b.WriteString(" []\n")
	} else {
		b.WriteString("\n")
	}
	for _, t := range req.Targets {
		fmt.Fprintf(&b, "    - name: %s\n      environment: %s\n      labels:\n        purpose: %s\n      manifests:\n"+
			"        repo: %s\n        branch: %s\n        path: ./%s\n", t.Name, t.Environment, t.Name, req.Repo, req.Branch, t.Name)
	}
	return []byte(b.String())
}

// createWorkload writes content as the workload.yaml of the application repository in dir,
// which must not have one yet: an existing file is never replaced (an error that is
// fs.ErrExist).
func createWorkload(dir string, content []byte) error {
	p := workloadPath(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil { //nolint:gosec // a folder of the application's repository, meant to be read and committed
		return err
	}
	w, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644) //nolint:gosec // a file of the application's repository, meant to be read and committed
	if err != nil {
		return err
	}
	_, err = w.Write(content)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}

// OnboardClusterRequest is a new cluster (or host) of a cluster type.
type OnboardClusterRequest struct {
	Name, Environment, ClusterType string
	// Reconciler is flux, argocd or host ("": from the cluster type's reconciler template).
	Reconciler string
	// HubURL is the hub the cluster's agent reports to ("": no agent).
	HubURL string
	// Labels are the cluster's on the hub; Rotate issues a new token for a cluster already
	// registered.
	Labels     map[string]string
	Rotate     bool
	AgentImage string
}

// Registrar registers a cluster with the hub and issues its token (the hub's client).
type Registrar interface {
	RegisterCluster(ctx context.Context, r api.ClusterRegistration, rotate bool) (api.IssuedToken, error)
}

// OnboardCluster resolves what a new cluster of req.ClusterType in req.Environment reads
// (the environment's GitOps repository, branch and folder, as the cluster reads them, and
// the reconciler) and returns everything it needs: the reconciler's objects, and the
// reporting agent's with its token when reg registers it (nil: nothing is registered, and
// the token is a placeholder).
func (f *Fleet) OnboardCluster(ctx context.Context, req OnboardClusterRequest, reg Registrar) (*authoring.ClusterBootstrap, error) {
	target, err := authoring.ResolveCluster(ctx, f.cfg.ControlPlane, f.cfg.Read, req.Environment, req.ClusterType)
	if err != nil {
		return nil, err
	}
	reconciler := req.Reconciler
	if reconciler == "" {
		reconciler = target.Reconciler
	}
	opts := authoring.ClusterOptions{Name: req.Name, Environment: req.Environment, ClusterType: req.ClusterType, Reconciler: reconciler,
		GitOps: target.GitOps, Hub: req.HubURL, AgentImage: req.AgentImage}
	if reg != nil {
		tok, err := reg.RegisterCluster(ctx, api.ClusterRegistration{Name: req.Name, Environment: req.Environment,
			ClusterType: req.ClusterType, Labels: req.Labels}, req.Rotate)
		if err != nil {
			return nil, fmt.Errorf("register %s: %w", req.Name, err)
		}
		opts.Token = tok.Token
	}
	return authoring.ClusterManifests(opts)
}
