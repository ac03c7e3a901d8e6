package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
)

type onboardAppOptions struct {
	a         authoringOptions
	repo      string
	workspace string
	branch    string
	appDir    string
	targets   []string
}

// workloadFolder is where onboard app writes workload.yaml in the application repository,
// and the path its WorkloadRegistration reads (Kalypso's sample layout).
const workloadFolder = "workload"

func newOnboardAppCmd(e *env) *cobra.Command {
	var o onboardAppOptions
	cmd := &cobra.Command{
		Use: "app NAME --repo URL --workspace WS [--app-dir DIR] [--target TARGET=ENV]...",
		Example: "  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --app-dir ../shop --target functional-test=dev --target uat=stage\n" +
			"  fleetform onboard app shop --repo https://github.com/org/shop --workspace retail --commit",
		Short: "Register an application repository and write its starting workload.yaml",
		Long: "onboard app adds the WorkloadRegistration of the application's repository to the control plane\n" +
			"(validated and planned like add: written, committed or proposed as a pull request) and writes\n" +
			"a starting workload/workload.yaml with the given deployment targets into --app-dir, the\n" +
			"application repository's work tree. The new workload is validated from there (--repo is read\n" +
			"from --app-dir), so the plan shows where its targets land.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.a.check(); err != nil {
				return err
			}
			if o.repo == "" || o.workspace == "" {
				return failed(ExitUsage, errors.New("--repo and --workspace are required"))
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.a.bind(cmd, e)
	f := cmd.Flags()
	f.StringVar(&o.repo, "repo", "", "the application's repository")
	f.StringVar(&o.workspace, "workspace", "", "the application team's workspace")
	f.StringVar(&o.branch, "branch", "main", "the branch the workloads are read from")
	f.StringVar(&o.appDir, "app-dir", "", "the application repository's work tree, where workload/workload.yaml is written")
	f.StringArrayVar(&o.targets, "target", nil, "a deployment target TARGET=ENV (repeatable)")
	return cmd
}

// workloadYAML is the starting workload.yaml.
func (o *onboardAppOptions) workloadYAML(name string) ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# The %s workload, registered by `fleetform onboard app`. Each deployment target is where\n"+
		"# the application runs in one environment; point its manifests at the folder (and branch) of\n"+
		"# its Kubernetes manifests, and give it labels the platform's scheduling policies select.\n", name)
	fmt.Fprintf(&b, "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata:\n  name: %s\nspec:\n  deploymentTargets:", name)
	if len(o.targets) == 0 {
		b.WriteString(" []\n")
	} else {
		b.WriteString("\n")
	}
	for _, t := range o.targets {
		target, env, ok := strings.Cut(t, "=")
		if !ok || target == "" || env == "" {
			return nil, failed(ExitUsage, fmt.Errorf("--target %q: want TARGET=ENV", t))
		}
		fmt.Fprintf(&b, "    - name: %s\n      environment: %s\n      labels:\n        purpose: %s\n      manifests:\n"+
			"        repo: %s\n        branch: %s\n        path: ./%s\n", target, env, target, o.repo, o.branch, target)
	}
	return []byte(b.String()), nil
}

func (o *onboardAppOptions) run(ctx context.Context, e *env, name string) error {
	content, err := o.workloadYAML(name)
	if err != nil {
		return err
	}
	// Validate the registration with the new workload.yaml, read from a copy.
	tmp, err := os.MkdirTemp("", "fleetform-onboard-*")
	if err != nil {
		return failed(ExitFailed, err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := writeWorkload(tmp, content); err != nil {
		return failed(ExitFailed, err)
	}
	op := registrationOp(name, o.repo, o.branch, "./"+workloadFolder, o.workspace)
	req, err := o.a.request(ctx, e, []authoring.Operation{op})
	if err != nil {
		return err
	}
	if o.appDir != "" {
		req.Platform.RepoMap[o.repo] = tmp
	}
	res, err := authoring.Apply(ctx, req)
	if err == nil && o.appDir != "" && !o.a.dryRun {
		if werr := writeWorkload(o.appDir, content); werr != nil {
			err = werr
		} else {
			res.Notes = append(res.Notes, "wrote "+filepath.Join(o.appDir, workloadFolder, "workload.yaml")+": commit it in the application's repository")
		}
	}
	return o.a.report(e, res, err)
}

func writeWorkload(dir string, content []byte) error {
	p := filepath.Join(dir, workloadFolder, "workload.yaml")
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return err
	}
	return os.WriteFile(p, content, 0o600)
}
