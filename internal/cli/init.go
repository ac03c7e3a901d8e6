package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
)

type initOptions struct {
	out          command.Output
	layout       string
	environments []string
	reconciler   string
	gitops       string
	author       string
}

func newInitCmd(e *env) *cobra.Command {
	var o initOptions
	cmd := &cobra.Command{
		Use: "init DIR",
		Example: "  fleetform init platform --environments dev,stage,prod --gitops ../platform-gitops.git\n" +
			"  fleetform init platform --layout kalypso --reconciler builtin/argocd --gitops https://github.com/org/platform-gitops",
		Short: "Create a new, valid control plane (a git repository with one commit)",
		Long: "init creates a control plane in DIR: the environments chained in the given order (each\n" +
			"promotes from the one before, none pinned yet), the built-in templates referenced by name\n" +
			"(no copies) and a README saying what goes where. With --gitops PATH, a new bare GitOps\n" +
			"repository is created there (when there is none) and the environments' GitOpsRepos point\n" +
			"to it. `fleetform validate` passes on the result and `schedule` has nothing to schedule.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args[0])
		},
	}
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.layout, "layout", "folder", "repository layout: folder or kalypso")
	f.StringSliceVar(&o.environments, "environments", []string{"dev", "stage", "prod"}, "environments, in promotion order")
	f.StringVar(&o.reconciler, "reconciler", authoring.DefaultReconciler, "default reconciler template of new cluster types: builtin/flux or builtin/argocd")
	f.StringVar(&o.gitops, "gitops", "", "GitOps repository: a URL, or a path (a bare repository is created there)")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "commit author, as \"Name <email>\"")
	return cmd
}

func (o *initOptions) validate() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	if o.layout != string(controlplane.LayoutFolder) && o.layout != string(controlplane.LayoutKalypso) {
		return command.Usagef("--layout %q: want folder or kalypso", o.layout)
	}
	_, err := author(o.author)
	return err
}

func (o *initOptions) run(ctx context.Context, e *env, dir string) error {
	sig, _ := author(o.author) // checked in validate
	res, err := fleet.Init(ctx, authoring.InitOptions{Dir: dir, Layout: controlplane.Layout(o.layout), Environments: o.environments,
		Reconciler: o.reconciler, GitOps: o.gitops, Author: object.Signature{Name: sig.Name, Email: sig.Email}})
	if err != nil {
		return err
	}
	err = o.out.Write(e.Stdout, res, func(w io.Writer) error {
		fmt.Fprintf(w, "created control plane %s (%s layout): %s\n", res.Dir, res.Layout, strings.Join(res.Environments, " -> "))
		if res.GitOps != "" {
			created := ""
			if res.GitOpsBare {
				created = " (new bare repository)"
			}
			fmt.Fprintf(w, "GitOps repository: %s%s\n", res.GitOps, created)
		}
		fmt.Fprintf(w, "next: fleetform add cluster-type NAME --env %s --control-plane %s\n", res.Environments[0], res.Dir)
		return nil
	})
	return err
}
