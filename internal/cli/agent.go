package cli

import (
	"errors"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// agentHubOptions are the flags every agent shares: the hub, the cluster and its token.
type agentHubOptions struct {
	hub       string
	cluster   string
	tokenFile string
	heartbeat time.Duration
}

func (o *agentHubOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.hub, "hub", "", "hub URL (required)")
	f.StringVar(&o.cluster, "cluster", "", "name the cluster or host is registered under on the hub (required)")
	f.StringVar(&o.tokenFile, "token-file", "", "file holding the cluster's token, read before every report; default: $FLEETFORM_AGENT_TOKEN")
	f.DurationVar(&o.heartbeat, "heartbeat", time.Minute, "send the state again after this long without a change")
}

// poster checks the flags and returns the Poster they describe.
// token checks the flags that reach the hub and returns the token: from --token-file (read
// before every report: tokenFile) or FLEETFORM_AGENT_TOKEN.
func (o *agentHubOptions) token() (tokenFile, token string, err error) {
	if o.hub == "" || o.cluster == "" {
		return "", "", command.Usage(errors.New("--hub and --cluster are required"))
	}
	if _, err := client.New(o.hub, "", nil); err != nil {
		return "", "", command.Usagef("--hub: %w", err)
	}
	switch env := os.Getenv("FLEETFORM_AGENT_TOKEN"); {
	case o.tokenFile != "":
		if _, err := os.Stat(o.tokenFile); err != nil {
			return "", "", command.Usagef("--token-file: %w", err)
		}
		return o.tokenFile, "", nil
	case env != "":
		return "", env, nil
	}
	return "", "", command.Usage(errors.New("no token: set FLEETFORM_AGENT_TOKEN or --token-file"))
}

func newAgentCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "agent",
		Example: "  fleetform agent kubernetes --hub https://hub.example.com --cluster edge-munich-1 --token-file /var/run/fleetform/token\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops https://git.example.com/platform-gitops --branch prod --cluster-type vm-line",
		Short: "Report what a cluster or host reconciled to the hub",
		Long: "agent runs next to a reconciler and reports its state to the hub: `agent kubernetes` in a\n" +
			"cluster running Flux or Argo CD, `agent host` on a VM or edge box that applies the Ansible\n" +
			"playbooks of its cluster type. Both keep working when the hub is unreachable and send the\n" +
			"latest state when it returns. See docs/agents.md.",
	}
	cmd.AddCommand(newAgentKubernetesCmd(e), newAgentHostCmd(e))
	return cmd
}
