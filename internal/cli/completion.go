package cli

import (
	"context"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// Shell completion: cobra's `completion` command prints the script for bash, zsh, fish or
// PowerShell; these functions complete flag values from the control plane the command line
// names (--control-plane, --config, --env as typed so far).

// noFiles ends a completion without falling back to file names.
const noFiles = cobra.ShellCompDirectiveNoFileComp

// completeEnvironments completes an environment name.
func (o *controlPlaneOptions) completeEnvironments(e *env) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		cp, err := o.open(completionContext(cmd), e)
		if err != nil {
			return nil, noFiles
		}
		envs, _, err := cp.Environments(completionContext(cmd))
		if err != nil {
			return nil, noFiles
		}
		out := make([]cobra.Completion, 0, len(envs))
		for _, env := range envs {
			out = append(out, env.Name)
		}
		return out, noFiles
	}
}

// completeFromSnapshot completes names listed by names from the environment's snapshot.
func (o *controlPlaneOptions) completeFromSnapshot(e *env, names func(*controlplane.Snapshot) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		r, err := o.pipeline(completionContext(cmd), e, pipeline.UpToSchedule)
		if err != nil {
			return nil, noFiles
		}
		out := names(r.Snapshot)
		slices.Sort(out)
		return slices.Compact(out), noFiles
	}
}

// clusterTypeNames lists the environment's cluster types.
func clusterTypeNames(s *controlplane.Snapshot) []string {
	out := make([]string, 0, len(s.ClusterTypes))
	for _, ct := range s.ClusterTypes {
		out = append(out, ct.Metadata.Name)
	}
	return out
}

// targetNames lists the environment's deployment targets.
func targetNames(s *controlplane.Snapshot) []string {
	var out []string
	for _, dt := range s.DeploymentTargets {
		if dt.Environment == s.Environment {
			out = append(out, dt.Name)
		}
	}
	return out
}

func completionContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
