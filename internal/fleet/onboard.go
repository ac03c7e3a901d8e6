package fleet

import (
	"context"
	"fmt"
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
	// Targets are its deployment targets, each in one environment.
	Targets []AppTarget
	// AppDir is the application repository's work tree, where workload/workload.yaml is
	// written ("": nowhere; the registration alone is validated).
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
// writes a starting workload.yaml with its deployment targets into req.AppDir. The new
// workload is validated from a copy, so that the plan shows where its targets land.
func (f *Fleet) OnboardApp(ctx context.Context, req OnboardAppRequest) (*authoring.Result, error) {
	content := workloadYAML(req)
	tmp, err := os.MkdirTemp("", "fleetform-onboard-*")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := writeWorkload(tmp, content); err != nil {
		return nil, err
	}
	with := *f
	if req.AppDir != "" {
		with.cfg.Read.RepoMap = maps.Clone(f.cfg.Read.RepoMap)
		if with.cfg.Read.RepoMap == nil {
			with.cfg.Read.RepoMap = map[string]string{}
		}
		with.cfg.Read.RepoMap[req.Repo] = tmp // read the new workload.yaml from the copy
	}
	op := authoring.AddRegistration(req.Name, req.Repo, req.Branch, "./"+WorkloadFolder, req.Workspace)
	res, err := with.Author(ctx, AuthorRequest{Operations: []authoring.Operation{op}, Mode: req.Mode, Message: req.Message})
	if err == nil && req.AppDir != "" && req.Mode != authoring.ModeDryRun {
		if werr := writeWorkload(req.AppDir, content); werr != nil {
			return res, werr
		}
		res.Notes = append(res.Notes, "wrote "+filepath.Join(req.AppDir, WorkloadFolder, "workload.yaml")+": commit it in the application's repository")
	}
	return res, err
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

func writeWorkload(dir string, content []byte) error {
	p := filepath.Join(dir, WorkloadFolder, "workload.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o600)
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
