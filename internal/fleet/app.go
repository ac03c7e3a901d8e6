package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// AppRequest is the application team's flow for one application: its source and config
// repositories, the environment, the values given, and the app GitOps repository.
type AppRequest struct {
	// Source is the application's source repository (a directory, a git repository or a git
	// URL), read at SourceRef ("": HEAD).
	Source, SourceRef string
	// ConfigRepo is its config repository, read at ConfigRef ("": the environment's branch
	// if there is one, else HEAD).
	ConfigRepo, ConfigRef string
	Env                   string
	// Vars are substituted in values files; Set are values over every values file, as helm
	// --set takes them.
	Vars map[string]string
	Set  []string
	// Version and ImageTag are the application's (also the variables VERSION and IMAGE_TAG).
	Version, ImageTag string
	// Regenerate writes new values of the chart's random functions instead of keeping the
	// targets' folders' ones.
	Regenerate bool
	// GitOps is the app GitOps repository ("": the one the targets' manifests.repo names,
	// through the repo map).
	GitOps string
	// PullRequest puts each branch's change on a head branch and opens (or updates) a pull
	// request instead of moving the branch.
	PullRequest bool
	// By is who asks and why the access policies allowed it, recorded with an app
	// promotion's decision (nil: not known; a hub behind its API records the token used).
	By *hub.Actor
}

// AppLoad reads the source and the environment's config and composes every target.
func (f *Fleet) AppLoad(ctx context.Context, req AppRequest) (*app.Run, error) {
	repos := f.appRepos()
	a, err := appSource(ctx, repos, req, req.SourceRef)
	if err != nil {
		return nil, err
	}
	return f.appCompose(ctx, repos, a, req, req.Env, req.Version, req.ImageTag)
}

// AppRender renders the environment's targets into the folder dir (the app GitOps
// repository's root). A target that fails is an InvalidError along with the result; the
// others are written.
func (f *Fleet) AppRender(ctx context.Context, req AppRequest, dir string) (*app.Result, error) {
	r, err := f.AppLoad(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := r.WriteDir(ctx, dir)
	if err != nil {
		return nil, err
	}
	return res, appFailed(res)
}

// AppPlan says what AppApply would change in the app GitOps repository, writing nothing.
func (f *Fleet) AppPlan(ctx context.Context, req AppRequest) (*app.Result, error) {
	r, err := f.AppLoad(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := f.writeApp(ctx, r, req, true)
	if err != nil {
		return nil, err
	}
	return res, appFailed(res)
}

// AppApply writes the environment's targets whose inputs changed into the app GitOps
// repository, one commit per branch, and posts the version of every target written to the
// hub (when the Fleet has one). A target that fails is an InvalidError along with the
// result; the others are written.
func (f *Fleet) AppApply(ctx context.Context, req AppRequest) (*app.Result, error) {
	r, err := f.AppLoad(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := f.writeApp(ctx, r, req, false)
	if err != nil {
		return nil, err
	}
	if f.cfg.Hub != nil {
		if err := f.postVersions(ctx, r, res); err != nil {
			return nil, err
		}
	}
	return res, appFailed(res)
}

// appFailed is an InvalidError when a target of res failed or a folder mismatched.
func appFailed(res *app.Result) error {
	if !res.Failed() {
		return nil
	}
	n := len(res.Mismatches)
	for _, t := range res.Targets {
		if t.Status == app.StatusFailed {
			n++
		}
	}
	return &InvalidError{Errors: max(n, 1)}
}

// appRepos opens repositories through the repo map, with the Fleet's credentials.
func (f *Fleet) appRepos() *controlplane.Repos {
	return controlplane.NewRepos(maps.Clone(f.cfg.Read.RepoMap), f.cfg.Credentials, f.cfg.Logger)
}

// appSource reads the application's source at ref.
func appSource(ctx context.Context, repos *controlplane.Repos, req AppRequest, ref string) (*app.App, error) {
	src, err := repos.Open(ctx, req.Source)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	tree, err := src.Tree(ref)
	if err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	return app.LoadSource(tree, req.Source)
}

// appCompose reads env's config and composes every target of a.
func (f *Fleet) appCompose(ctx context.Context, repos *controlplane.Repos, a *app.App, req AppRequest, env, version, imageTag string) (*app.Run, error) {
	cfgRepo, err := repos.Open(ctx, req.ConfigRepo)
	if err != nil {
		return nil, fmt.Errorf("config repository: %w", err)
	}
	cfg, err := app.LoadConfig(cfgRepo, env, req.ConfigRef)
	if err != nil {
		return nil, err
	}
	in, err := app.NewInputs(a, cfg, req.Vars, req.Set, version, imageTag)
	if err != nil {
		return nil, err
	}
	in.Regenerate = req.Regenerate
	in.Sandbox = f.cfg.RenderSandbox
	return app.NewRun(in, env)
}

// writeApp writes (or, dry, plans) a run into the app GitOps repository.
func (f *Fleet) writeApp(ctx context.Context, r *app.Run, req AppRequest, dry bool) (*app.Result, error) {
	repo, err := f.appGitOps(ctx, r, req.GitOps)
	if err != nil {
		return nil, err
	}
	w := &app.Writer{Repo: repo, Author: object.Signature{Name: f.cfg.Author.Name, Email: f.cfg.Author.Email}, Logger: f.cfg.Logger}
	if req.PullRequest && !dry {
		url := req.GitOps
		if url == "" {
			url = r.Targets[0].Target.Repo
		}
		frepo, client, err := pipeline.ForgeClient(ctx, f.cfg.Credentials, url, f.cfg.ForgeURL)
		if err != nil {
			return nil, Usage(err)
		}
		w.PullRequests = &app.PullRequests{Forge: client, Repo: frepo}
	}
	if dry {
		return w.Plan(ctx, r)
	}
	return w.Apply(ctx, r)
}

// appGitOps opens the app GitOps repository of a run: gitops, else the one repository every
// target names (through the repo map).
func (f *Fleet) appGitOps(ctx context.Context, r *app.Run, gitops string) (*gitrepo.Repo, error) {
	location := gitops
	if location == "" {
		repo := r.Targets[0].Target.Repo
		for _, t := range r.Targets {
			if t.Target.Repo != repo {
				return nil, Usagef("the targets of %s name several repositories (%s, %s): give --gitops", r.Env, repo, t.Target.Repo)
			}
		}
		if repo == "" {
			return nil, Usage(errors.New("the targets name no manifests.repo: give --gitops"))
		}
		location = repo
		if p, ok := f.cfg.Read.RepoMap.Lookup(repo); ok {
			location = p
		}
	}
	// The credentials of the command line's hosts only: a manifests.repo written in the
	// application's files does not make its host trusted with FLEETFORM_GIT_TOKEN.
	return gitrepo.Open(ctx, location, f.gitopsCache(), f.cfg.Credentials, f.cfg.Logger)
}

// postVersions posts the version of every target that did not fail to the hub.
func (f *Fleet) postVersions(ctx context.Context, r *app.Run, res *app.Result) error {
	for _, t := range res.Targets {
		if t.Status == app.StatusFailed {
			continue
		}
		v := hub.WorkloadVersion{Environment: r.Env, Workload: res.Workload,
			DeploymentTarget: res.Workload + "-" + t.Target, Version: res.Version, Build: res.ImageTag,
			SourceCommit: res.SourceCommit, ReportedAt: time.Now().UTC()}
		if v.Version == "" {
			v.Version = res.SourceCommit
		}
		if err := f.cfg.Hub.PostWorkloadVersion(ctx, v); err != nil {
			return fmt.Errorf("post the version of %s to the hub: %w", t.Target, err)
		}
	}
	return nil
}

// AppExplanation is a target's effective values with their provenance: the contract of
// `app explain -o json`.
type AppExplanation struct {
	Environment      string               `json:"environment"`
	Workload         string               `json:"workload"`
	DeploymentTarget string               `json:"deploymentTarget"`
	ConfigFolder     string               `json:"configFolder"`
	Files            []string             `json:"files"`
	Values           map[string]*AppValue `json:"values"`
}

// AppValue is one effective value: where it was set and what it shadowed, nearest first.
type AppValue struct {
	Value    any            `json:"value"`
	Source   app.Source     `json:"source"`
	Shadowed []app.Shadowed `json:"shadowed"`
}

// AppExplain composes one target's values as AppRender does and explains each leaf value
// under key ("": every one). req.Env defaults to the target's environment in workload.yaml.
func (f *Fleet) AppExplain(ctx context.Context, req AppRequest, target, key string) (*AppExplanation, error) {
	repos := f.appRepos()
	a, err := appSource(ctx, repos, req, req.SourceRef)
	if err != nil {
		return nil, err
	}
	env := req.Env
	if env == "" {
		for _, t := range a.Workload.Spec.DeploymentTargets {
			if t.Name == target {
				env = t.Environment
				break
			}
		}
	}
	if env == "" {
		return nil, fmt.Errorf("%s: no deployment target %s", a.Workload.Source.File, target)
	}
	r, err := f.appCompose(ctx, repos, a, req, env, req.Version, req.ImageTag)
	if err != nil {
		return nil, err
	}
	t, ok := r.Target(target)
	if !ok {
		return nil, fmt.Errorf("%s: no deployment target %s in environment %s", a.Workload.Source.File, target, env)
	}
	if t.Err != nil {
		return nil, t.Err
	}
	doc := &AppExplanation{Environment: env, Workload: a.Workload.Metadata.Name, DeploymentTarget: target,
		ConfigFolder: t.Folder, Files: r.In.Files(t.Folder), Values: map[string]*AppValue{}}
	for p, prov := range t.Values.Lookup(key) {
		v, _ := t.Values.Get(p)
		doc.Values[p] = &AppValue{Value: v, Source: prov.Source, Shadowed: prov.Shadowed}
	}
	if key != "" && len(doc.Values) == 0 {
		return nil, fmt.Errorf("target %s has no value %s", target, key)
	}
	return doc, nil
}
