// Package cli is the fleetform command line: one file per command, options bound into
// per-command structs, and a single Main that returns the exit code.
package cli

import (
	"context"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/cli/command"
)

// Exit codes (command.ExitCode chooses them).
const (
	ExitOK      = command.ExitOK
	ExitFailed  = command.ExitFailed
	ExitUsage   = command.ExitUsage
	ExitRefused = command.ExitRefused
)

// env is what commands run with: streams and a logger.
type env = command.Env

// Run runs the command line until it ends or a SIGINT or SIGTERM stops it (command.Run).
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if os.Getenv(app.RenderWorkerEnv) == "1" { // a chart render worker (app.Sandbox)
		return app.ServeRenderWorker(stdin, stdout)
	}
	return command.Run(newRoot, args, stdin, stdout, stderr)
}

// Main runs the fleetform command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return command.Main(ctx, newRoot, args, stdin, stdout, stderr)
}

func newRoot(e *env) *cobra.Command {
	root := command.Root(e, &cobra.Command{
		Use: "fleetform",
		Example: "  fleetform validate --control-plane ./platform\n" +
			"  fleetform schedule --control-plane ./platform --env dev\n" +
			"  fleetform explain --control-plane ./platform --env dev --deployment-target shop-web\n" +
			"  fleetform apply --control-plane ./platform --env dev --gitops ../platform-gitops",
		Short:   "Fleet workload and configuration management, the GitOps way",
		Version: Version(),
		Long: "fleetform turns a control plane kept in git (environments, cluster types, workloads,\n" +
			"scheduling policies, config values, templates) into the GitOps tree every cluster type\n" +
			"must reconcile.",
	})
	root.AddCommand(
		newValidateCmd(e),
		newScheduleCmd(e),
		newRenderCmd(e),
		newExplainCmd(e),
		newPlanCmd(e),
		newApplyCmd(e),
		newPromoteCmd(e),
		newVersionCmd(e),
		newHubCmd(e),
		newStatusCmd(e),
		newDiffCmd(e),
		newHistoryCmd(e),
		newDriftCmd(e),
		newApproveCmd(e),
		newAgentCmd(e),
		newServeCmd(e),
		newSyncCmd(e),
		newSourcesCmd(e),
		newInitCmd(e),
		newAddCmd(e),
		newSetCmd(e),
		newUnsetCmd(e),
		newRemoveCmd(e),
		newOnboardCmd(e),
		newAppCmd(e),
	)
	return root
}
