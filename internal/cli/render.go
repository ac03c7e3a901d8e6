package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type renderOptions struct {
	cp  controlPlaneOptions
	out command.Output
	dir string
}

func newRenderCmd(e *env) *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use: "render",
		Example: "  fleetform render --control-plane ./platform --env dev --out out/dev\n" +
			"  # a Kalypso control plane, with its workload repository cloned next to it\n" +
			"  fleetform render --control-plane ./kalypso-control-plane --env dev --out /tmp/dev --repo-map https://github.com/org/kalypso-svc-src=../kalypso-svc-src",
		Short: "Render an environment's GitOps tree into a folder",
		Long: "render writes the environment's GitOps tree into --out, which stands for the GitOpsRepo's\n" +
			"path: <clusterType>/README.md, <clusterType>/<deploymentTarget>/{reconciler,namespace,\n" +
			"platform-config}.yaml and .github/tracking/Promoted_Commit_Id. Inside the cluster-type\n" +
			"folders it renders, files it no longer renders are removed, except those of assignments\n" +
			"that failed, which keep their previous files. Anything else in --out is left alone. It\n" +
			"never writes through a symbolic link inside --out: it stops first, naming the link.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.dir, "out", "", "folder to write the tree into (stands for the GitOpsRepo path)")
	return cmd
}

func (o *renderOptions) run(ctx context.Context, e *env) error {
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	doc, err := f.Render(ctx, o.cp.env, o.dir, e.Stderr)
	if doc == nil {
		return err
	}
	printDiagnostics(e.Stderr, doc.Run.Diagnostics())
	werr := o.out.Write(e.Stdout, doc, func(w io.Writer) error {
		fmt.Fprintf(w, "rendered environment %s: %d assignment(s) on %d cluster type(s) into %s\n",
			doc.Environment, doc.Assignments-len(doc.Failed), doc.ClusterTypes, o.dir)
		fmt.Fprintf(w, "files: %d written, %d unchanged, %d removed\n", len(doc.Written), doc.Unchanged, len(doc.Removed))
		if err := perClusterType(w, doc.Run, doc.Written); err != nil {
			return err
		}
		if len(doc.Failed) > 0 {
			fmt.Fprintf(w, "%d assignment(s) failed and kept their previous files:\n", len(doc.Failed))
			t := command.NewTable(w, "  CLUSTER TYPE", "DEPLOYMENT TARGET", "ERROR")
			for _, f := range doc.Failed {
				t.Row("  "+f.ClusterType, f.DeploymentTarget, f.Error)
			}
			return t.Flush()
		}
		return nil
	})
	if werr != nil {
		return werr
	}
	return command.Reported(err)
}

func perClusterType(w io.Writer, r *pipeline.Run, written []string) error {
	assigned, failedN, writes := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range r.Output.Assignments {
		a := &r.Output.Assignments[i]
		assigned[a.ClusterType]++
		if a.Err != nil {
			failedN[a.ClusterType]++
		}
	}
	for _, p := range written {
		ct, _, _ := strings.Cut(p, "/")
		writes[ct]++
	}
	fmt.Fprintln(w)
	t := command.NewTable(w, "CLUSTER TYPE", "ASSIGNMENTS", "FAILED", "FILES WRITTEN")
	for _, ct := range r.Output.ClusterTypes {
		t.Row(ct, fmt.Sprint(assigned[ct]), fmt.Sprint(failedN[ct]), fmt.Sprint(writes[ct]))
	}
	return t.Flush()
}

// nonNil keeps JSON lists [] rather than null.
func (o *renderOptions) validate() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	if o.dir == "" {
		return command.Usagef("--out is required")
	}
	return nil
}
