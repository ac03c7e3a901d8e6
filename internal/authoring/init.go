package authoring

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/repourl"
)

// InitOptions describe a new control plane.
type InitOptions struct {
	// Dir is created (it must not exist, or be empty).
	Dir    string
	Layout controlplane.Layout
	// Environments are chained in this order (each promotes from the one before).
	Environments []string
	// Reconciler is the template new cluster types use by default.
	Reconciler string
	// GitOps is the GitOps repository: a URL, or a local path where a bare repository is
	// created when there is none.
	GitOps string
	Author object.Signature
}

// InitResult is what Init made.
type InitResult struct {
	Dir          string            `json:"dir"`
	Layout       string            `json:"layout"`
	Environments []string          `json:"environments"`
	GitOps       string            `json:"gitops,omitempty"`
	GitOpsBare   bool              `json:"gitopsCreated,omitempty"`
	Commits      map[string]string `json:"commits"`
}

// Init creates a new, valid control plane: a git repository with one commit (per branch
// in the Kalypso layout), the environments chained, the built-in templates referenced by
// name and a README saying what goes where.
func Init(ctx context.Context, o InitOptions) (*InitResult, error) {
	if o.Layout == controlplane.LayoutAuto {
		o.Layout = controlplane.LayoutFolder
	}
	if o.Layout != controlplane.LayoutFolder && o.Layout != controlplane.LayoutKalypso {
		return nil, fmt.Errorf("layout %q: want folder or kalypso", o.Layout)
	}
	if len(o.Environments) == 0 {
		o.Environments = []string{"dev", "stage", "prod"}
	}
	if o.Reconciler == "" {
		o.Reconciler = DefaultReconciler
	}
	for i, e := range o.Environments {
		if err := checkName("Environment", e); err != nil {
			return nil, err
		}
		if slices.Contains(o.Environments[:i], e) {
			return nil, fmt.Errorf("environment %q is listed twice", e)
		}
	}
	if entries, err := os.ReadDir(o.Dir); err == nil && len(entries) > 0 {
		return nil, fmt.Errorf("%s exists and is not empty", o.Dir)
	}
	res := &InitResult{Dir: o.Dir, Layout: string(o.Layout), Environments: o.Environments, Commits: map[string]string{}}
	gitopsRepo, err := o.gitops(res)
	if err != nil {
		return nil, err
	}
	g, err := git.PlainInitWithOptions(o.Dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", o.Dir, err)
	}
	ws := &workspace{location: o.Dir, layout: o.Layout, g: g, head: "main", main: "main", tip: "main",
		tips: map[string]plumbing.Hash{}, changes: map[fileKey][]byte{}}
	annotations := map[string]string{AnnotationReconciler: o.Reconciler}
	for i, e := range o.Environments {
		spec := map[string]any{}
		if i > 0 {
			// The default gate, written out so that it is seen (and changed where it is read).
			spec["promotion"] = map[string]any{"from": o.Environments[i-1], "minCompliantPercent": 100}
		}
		if err := ws.addEnvironment(Operation{Op: OpAdd, Kind: v1alpha1.KindEnvironment, Name: e, Spec: spec}, gitopsRepo, annotations); err != nil {
			return nil, err
		}
		ws.envs = append(ws.envs, controlplane.EnvironmentInfo{Name: e})
	}
	ws.write(fileKey{"main", "README.md"}, []byte(readme(o)))
	if err := ws.commitInit(ctx, o, res); err != nil {
		return nil, err
	}
	return res, nil
}

// gitops returns the GitOps repository the environments name, creating a bare repository
// at a local path that does not exist yet.
func (o InitOptions) gitops(res *InitResult) (string, error) {
	if o.GitOps == "" {
		return "", nil
	}
	p, local := repourl.LocalPath(o.GitOps)
	if !local {
		res.GitOps = o.GitOps
		return o.GitOps, nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	res.GitOps = abs
	if _, err := os.Stat(abs); errors.Is(err, os.ErrNotExist) {
		if _, err := git.PlainInitWithOptions(abs, &git.PlainInitOptions{Bare: true,
			InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}}); err != nil {
			return "", fmt.Errorf("create the GitOps repository %s: %w", abs, err)
		}
		res.GitOpsBare = true
	}
	return abs, nil
}

// commitInit commits every branch's files, then checks main out.
func (ws *workspace) commitInit(_ context.Context, o InitOptions, res *InitResult) error {
	sig := o.Author
	if sig.Name == "" {
		sig.Name, sig.Email = "fleetform", "fleetform@localhost"
	}
	sig.When = time.Now()
	var mainCommit plumbing.Hash
	for branch, files := range ws.byBranch() {
		msg := "fleetform init: " + strings.Join(o.Environments, " → ") + " (" + string(o.Layout) + " layout)\n"
		if branch != "main" {
			msg = "fleetform init: environment " + branch + "\n"
		}
		c, err := commitFiles(ws.g.Storer, plumbing.ZeroHash, files, msg, sig)
		if err != nil {
			return err
		}
		if err := ws.g.Storer.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName(branch), c)); err != nil {
			return err
		}
		res.Commits[branch] = c.String()
		if branch == "main" {
			mainCommit = c
		}
	}
	wt, err := ws.g.Worktree()
	if err != nil {
		return err
	}
	return wt.Reset(&git.ResetOptions{Mode: git.HardReset, Commit: mainCommit})
}

func readme(o InitOptions) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Control plane\n\nA fleetform control plane (%s layout), created by `fleetform init`. Environments, in\npromotion order: %s.\n\n",
		o.Layout, strings.Join(o.Environments, " → "))
	b.WriteString("Edit it with `fleetform add`, `set config`, `unset config` and `remove` (they validate the\n" +
		"whole control plane and show what a change does to the fleet before writing it), or by hand.\n\n## What goes where\n\n")
	if o.Layout == controlplane.LayoutKalypso {
		b.WriteString("Branch `main` holds the common (promotable) content:\n\n" +
			"- `.environments/<env>.yaml`: the `Environment` objects\n" +
			"- `workloads/<name>.yaml`: `Workload`s written here (with their deployment targets)\n" +
			"- `registrations/<name>.yaml`: `WorkloadRegistration`s of application repositories\n" +
			"- `templates/`: your own `Template`s (the built-in ones, `builtin/flux`, `builtin/argocd`,\n  `builtin/namespace`, `builtin/configmap`, ... are referenced by name, never copied)\n\n" +
			"One branch per environment holds that environment's content:\n\n" +
			"- `cluster-types/<name>.yaml`: `ClusterType`s\n" +
			"- `scheduling/<name>.yaml`: `SchedulingPolicy`s\n" +
			"- `config/<name>.yaml`: platform-config `ConfigMap`s\n" +
			"- `gitops-repo.yaml`: where `fleetform apply` writes the environment's GitOps tree\n" +
			"- `base-repo.yaml`: the commit of `main` the environment renders (none until its first promotion)\n")
	} else {
		b.WriteString("Everything outside `environments/` is common (promotable) content:\n\n" +
			"- `workloads/<name>.yaml`: `Workload`s written here (with their deployment targets)\n" +
			"- `registrations/<name>.yaml`: `WorkloadRegistration`s of application repositories\n" +
			"- `templates/`: your own `Template`s (the built-in ones, `builtin/flux`, `builtin/argocd`,\n  `builtin/namespace`, `builtin/configmap`, ... are referenced by name, never copied)\n\n" +
			"`environments/<env>/` holds that environment's content:\n\n" +
			"- `environment.yaml`: the `Environment` (its place in the promotion chain)\n" +
			"- `cluster-types/<name>.yaml`: `ClusterType`s\n" +
			"- `scheduling/<name>.yaml`: `SchedulingPolicy`s\n" +
			"- `config/<name>.yaml`: platform-config `ConfigMap`s\n" +
			"- `gitops-repo.yaml`: where `fleetform apply` writes the environment's GitOps tree\n" +
			"- `base-repo.yaml`: the common commit the environment renders (none until its first promotion)\n")
	}
	fmt.Fprintf(&b, "\nNew cluster types are reconciled with `%s` unless `--reconciler` says otherwise.\n", o.Reconciler)
	return b.String()
}
