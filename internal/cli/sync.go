package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
)

type syncOptions struct {
	hubOutputOptions
	environment string
}

func newSyncCmd(e *env) *cobra.Command {
	var o syncOptions
	cmd := &cobra.Command{
		Use: "sync",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform sync --hub http://127.0.0.1:8080 --env dev\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform sync --hub http://127.0.0.1:8080 --env prod -o json",
		Short: "Show the last sync of an environment by fleetform serve",
		Long: "sync prints what `fleetform serve` did last for the environment: when and why (start, poll,\n" +
			"webhook, promotion), the control-plane commit, the GitOps commit or pull request, the files\n" +
			"changed, the assignments that failed and the error. Reads the hub (token in " + command.HubTokenEnv + ").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			rec, err := c.LatestSync(cmd.Context(), o.environment)
			if err != nil {
				return err
			}
			if err := writeOut(e, o.out, rec, func(w io.Writer) error { return syncText(w, rec) }); err != nil || rec.Error == "" {
				return err
			}
			return command.Reported(fmt.Errorf("the last sync of %s failed: %s", rec.Environment, rec.Error))
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.environment, "env", "", "environment (required)")
	_ = cmd.MarkFlagRequired("env")
	return cmd
}

func syncText(w io.Writer, r hub.SyncRecord) error {
	what := "no change"
	switch {
	case r.PullRequest != "":
		what = "pull request " + r.PullRequest
	case r.GitOpsCommit != "":
		what = "committed " + shortSHA(r.GitOpsCommit) + " to " + r.Branch
	}
	fmt.Fprintf(w, "%s, %s at %s (%s, %d ms): %s\n", r.Environment, r.Trigger, r.Time.UTC().Format(time.RFC3339), orDash(shortSHA(r.ControlPlaneCommit)), r.DurationMS, what)
	fmt.Fprintf(w, "files changed: %d; failed assignments: %d\n", r.FilesChanged, len(r.Failed))
	for _, f := range r.Failed {
		fmt.Fprintf(w, "  %s/%s: %s\n", f.ClusterType, f.DeploymentTarget, f.Error)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "error: %s\n", r.Error)
	}
	return nil
}
