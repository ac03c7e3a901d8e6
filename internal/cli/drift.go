package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
)

type driftOptions struct {
	hub         hubOptions
	out         command.Output
	environment string
	behind      time.Duration
}

func newDriftCmd(e *env) *cobra.Command {
	var o driftOptions
	cmd := &cobra.Command{
		Use:     "drift",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform drift --hub https://hub.example.com --env prod --behind 30m",
		Short:   "List an environment's clusters that do not match what was scheduled",
		Long: "drift lists the clusters still at another revision longer than --behind after the desired\n" +
			"one was posted, failing deployments and clusters, silent clusters (never reported, or not\n" +
			"within the hub's --stale-after) and clusters reconciling another cluster type's folder.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			d, err := c.Drift(cmd.Context(), o.environment, o.behind)
			if err != nil {
				return err
			}
			return writeOut(e, o.out, d, func(w io.Writer) error { return driftText(w, d) })
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.environment, "env", "", "environment (required)")
	cmd.Flags().DurationVar(&o.behind, "behind", 0, "how long after the desired revision a cluster at another one counts as behind (default: the hub's)")
	_ = cmd.MarkFlagRequired("env")
	return cmd
}

func driftText(w io.Writer, d hub.Drift) error {
	fmt.Fprintf(w, "%s at revision %s: %d behind, %d failing deployment(s), %d failing cluster(s), %d silent, %d on a wrong path\n",
		d.Environment, orDash(shortSHA(d.Revision)), len(d.Behind), len(d.Failing), len(d.FailingClusters), len(d.Silent), len(d.WrongPath))
	if len(d.Behind)+len(d.Failing)+len(d.FailingClusters)+len(d.Silent)+len(d.WrongPath) == 0 {
		return nil
	}
	t := command.NewTable(w, "PROBLEM", "CLUSTER", "CLUSTER TYPE", "DETAIL")
	for _, c := range d.Behind {
		t.Row("behind", c.Name, c.ClusterType, "at "+shortSHA(c.Revision))
	}
	for _, f := range d.Failing {
		t.Row("failing deployment", f.Cluster, f.ClusterType, f.DeploymentTarget+" Failed since "+f.Since.UTC().Format(time.RFC3339))
	}
	for _, c := range d.FailingClusters {
		t.Row("failing cluster", c.Name, c.ClusterType, strings.TrimSpace(string(c.Status)+" "+c.Message))
	}
	for _, c := range d.Silent {
		detail := "never reported"
		if c.Reported {
			detail = "last report " + c.ReceivedAt.UTC().Format(time.RFC3339)
		}
		t.Row("silent", c.Name, c.ClusterType, detail)
	}
	for _, c := range d.WrongPath {
		t.Row("wrong path", c.Name, c.ClusterType, "reconciles "+c.GitOpsPath)
	}
	return t.Flush()
}
