package cli

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
)

// The commands that read the hub: status, diff, history, drift; and approve, which writes
// an approval. Human tables by default, -o json for the hub's answer as is.

type statusOptions struct {
	hub         hubOptions
	out         outputOption
	environment string
	workload    string
}

func newStatusCmd(e *env) *cobra.Command {
	var o statusOptions
	cmd := &cobra.Command{
		Use: "status",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform status --hub https://hub.example.com --env prod\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform status --hub https://hub.example.com --env prod --workload shop -o json",
		Short: "Show how far an environment's latest GitOps revision has reached its clusters",
		Long: "status prints, for every deployment target of the environment's latest desired revision,\n" +
			"how many clusters of its cluster type are compliant, failed, progressing (or at another\n" +
			"revision) and unknown (silent). Reads the hub (token in " + hubTokenEnv + ").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			ro, err := c.Rollout(cmd.Context(), o.environment)
			if err != nil {
				return failed(ExitFailed, err)
			}
			if o.workload != "" {
				ro.Targets = slices.DeleteFunc(ro.Targets, func(t hub.TargetRollout) bool { return t.Workload != o.workload })
			}
			return writeOut(e, o.out, ro, func(w io.Writer) error { return rolloutText(w, ro) })
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	cmd.Flags().StringVar(&o.environment, "env", "", "environment (required)")
	cmd.Flags().StringVar(&o.workload, "workload", "", "only this workload's deployment targets")
	_ = cmd.MarkFlagRequired("env")
	return cmd
}

// writeOut prints v in the chosen format and maps a failure to ExitFailed.
func writeOut(e *env, out outputOption, v any, text func(io.Writer) error) error {
	if err := out.write(e.stdout, v, text); err != nil {
		return failed(ExitFailed, err)
	}
	return nil
}

func rolloutText(w io.Writer, ro hub.Rollout) error {
	fmt.Fprintf(w, "%s at revision %s\n", ro.Environment, shortSHA(ro.Revision))
	t := newTable(w, "WORKLOAD", "DEPLOYMENT TARGET", "CLUSTER TYPE", "CLUSTERS", "COMPLIANT", "FAILED", "PROGRESSING", "UNKNOWN")
	for _, r := range ro.Targets {
		t.row(r.Workload, r.DeploymentTarget, r.ClusterType, strconv.Itoa(r.Clusters), strconv.Itoa(r.Compliant),
			strconv.Itoa(r.Failed), strconv.Itoa(r.Progressing), strconv.Itoa(r.Unknown))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, r := range ro.Targets { // the application versions CI posted (fleetform app apply --hub)
		if r.Version != "" {
			fmt.Fprintf(w, "%s: version %s runs on %d of %d clusters\n", r.DeploymentTarget, r.Version, r.Compliant, r.Clusters)
		}
	}
	return nil
}

// hubOutputOptions are the flags of a command that asks the hub something and prints it.
type hubOutputOptions struct {
	hub hubOptions
	out outputOption
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
