package cli

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// The commands that read the hub: status, diff, history, drift; and approve, which writes
// an approval. Human tables by default, -o json for the hub's answer as is.

type statusOptions struct {
	hub         hubOptions
	out         command.Output
	environment string
	workload    string
}

func newStatusCmd(e *env) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use: "status",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform status --hub https://hub.example.com\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform status --hub https://hub.example.com --env prod\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform status --hub https://hub.example.com --env prod --workload shop -o json",
		Short: "Show how far each workload's latest desired revision has reached its clusters",
		Long: "status prints, per workload and environment, how many of the clusters that should run it\n" +
			"run its latest desired revision (\"should reach 100, has 73\"). With --env, it also lists\n" +
			"every deployment target of that environment: how many clusters of its cluster type are\n" +
			"compliant, failed, progressing (or at another revision) and unknown (silent); -o json then\n" +
			"prints that environment's rollout, and without --env {\"workloads\": [...]} with every\n" +
			"environment's counts. Reads the hub (token in " + command.HubTokenEnv + ").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), e, c)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.environment, "env", "", "only this environment (default: every environment)")
	cmd.Flags().StringVar(&o.workload, "workload", "", "only this workload (an error when no environment schedules it)")
	return cmd
}

// run reads the rollouts and prints them.
func (o *statusOptions) run(ctx context.Context, e *env, c *client.Client) error {
	envs := []string{o.environment}
	if o.environment == "" {
		all, err := c.Environments(ctx)
		if err != nil {
			return err
		}
		envs = all
	}
	var rollouts []hub.Rollout
	for _, env := range envs {
		ro, err := c.Rollout(ctx, env)
		if o.environment == "" && hub.ErrorCode(err) == hub.CodeNotFound {
			continue // registered clusters, no desired state yet
		}
		if err != nil {
			return err
		}
		rollouts = append(rollouts, ro)
	}
	if o.workload != "" {
		known := false
		for i := range rollouts {
			rollouts[i].Targets = slices.DeleteFunc(rollouts[i].Targets, func(t hub.TargetRollout) bool { return t.Workload != o.workload })
			known = known || len(rollouts[i].Targets) > 0
		}
		if !known {
			return fmt.Errorf("workload %q is not in the latest desired state of %s: check its name (fleetform status lists the workloads)",
				o.workload, strings.Join(envs, ", "))
		}
	}
	summary := hub.SummariseRollouts(rollouts)
	if o.environment != "" {
		return writeOut(e, o.out, rollouts[0], func(w io.Writer) error {
			if err := rolloutText(w, rollouts[0]); err != nil {
				return err
			}
			fmt.Fprintln(w)
			return reachText(w, summary)
		})
	}
	return writeOut(e, o.out, map[string]any{"workloads": summary}, func(w io.Writer) error { return reachText(w, summary) })
}

// reachText prints, per workload and environment, how many clusters should run it and how
// many run its latest desired revision.
func reachText(w io.Writer, reach []hub.WorkloadReach) error {
	t := command.NewTable(w, "WORKLOAD", "ENVIRONMENT", "SHOULD REACH", "HAS", "FAILED", "PROGRESSING", "UNKNOWN")
	for _, r := range reach {
		t.Row(r.Workload, r.Environment, strconv.Itoa(r.ShouldReach), strconv.Itoa(r.Has), strconv.Itoa(r.Failed),
			strconv.Itoa(r.Progressing), strconv.Itoa(r.Unknown))
	}
	return t.Flush()
}

// writeOut prints v in the chosen format and maps a failure to ExitFailed.
func writeOut(e *env, out command.Output, v any, text func(io.Writer) error) error {
	if err := out.Write(e.Stdout, v, text); err != nil {
		return err
	}
	return nil
}

func rolloutText(w io.Writer, ro hub.Rollout) error {
	fmt.Fprintf(w, "%s at revision %s\n", ro.Environment, shortSHA(ro.Revision))
	t := command.NewTable(w, "WORKLOAD", "DEPLOYMENT TARGET", "CLUSTER TYPE", "CLUSTERS", "COMPLIANT", "FAILED", "PROGRESSING", "UNKNOWN")
	for _, r := range ro.Targets {
		t.Row(r.Workload, r.DeploymentTarget, r.ClusterType, strconv.Itoa(r.Clusters), strconv.Itoa(r.Compliant),
			strconv.Itoa(r.Failed), strconv.Itoa(r.Progressing), strconv.Itoa(r.Unknown))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, r := range ro.Targets { // the application versions CI posted (fleetform app apply --hub)
		if r.Version != "" {
			fmt.Fprintf(w, "%s on %s: version %s runs on %d of %d clusters\n", r.DeploymentTarget, r.ClusterType, r.Version, r.Compliant, r.Clusters)
		}
	}
	return nil
}

// hubOutputOptions are the flags of a command that asks the hub something and prints it.
type hubOutputOptions struct {
	hub hubOptions
	out command.Output
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// fullSHA is a full git commit SHA (SHA-1 or SHA-256).
var fullSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

func shortSHA(s string) string { return s[:min(len(s), 12)] }
