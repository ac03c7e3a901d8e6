package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/agent/host"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
)

type agentHostOptions struct {
	hub             agentHubOptions
	gitops          string
	branch          string
	path            string
	clusterType     string
	stateDir        string
	check           bool
	once            bool
	interval        time.Duration
	resync          time.Duration
	ansiblePlaybook string
}

func newAgentHostCmd(e *env) *cobra.Command {
	var o agentHostOptions
	cmd := &cobra.Command{
		Use: "host",
		Example: "  # on a VM: apply the cluster type's playbooks from the GitOps branch and report\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops https://git.example.com/platform-gitops --branch prod --cluster-type vm-line\n" +
			"  # once, in check mode (nothing changed on the host)\n" +
			"  fleetform agent host --hub https://hub.example.com --cluster line-7 --gitops ./gitops --branch prod --cluster-type vm-line --check --once",
		Short: "Apply this host's Ansible playbooks from the GitOps repository and report them to the hub",
		Long: "agent host fetches the cluster type's folder of the GitOps branch, runs each deployment\n" +
			"target's namespace.yaml then reconciler.yaml with ansible-playbook (on localhost), cleans up\n" +
			"the targets that disappeared, and reports to the hub what it applied and whether it worked.\n" +
			"It repeats every --interval, or runs once with --once (for a systemd timer or cron). With\n" +
			"--check, Ansible runs in check mode: nothing changes, nothing is recorded or reported.\n" +
			"The token comes from FLEETFORM_AGENT_TOKEN or --token-file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context(), e) },
	}
	o.hub.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.gitops, "gitops", "", "GitOps repository URL or path (required)")
	f.StringVar(&o.branch, "branch", "", "the environment's branch (required)")
	f.StringVar(&o.path, "path", "", "the GitOpsRepo's folder inside the repository (default: the root)")
	f.StringVar(&o.clusterType, "cluster-type", "", "the host's cluster type (required)")
	f.StringVar(&o.stateDir, "state-dir", defaultAgentStateDir(), "where the agent keeps its clone, the copies of what it applied, and its state")
	f.BoolVar(&o.check, "check", false, "run Ansible in check mode (--check), once: change nothing, record nothing, report nothing")
	f.BoolVar(&o.once, "once", false, "apply and report once, then exit (1 when a target failed or the hub was not reached)")
	f.DurationVar(&o.interval, "interval", 5*time.Minute, "time between two runs")
	f.DurationVar(&o.resync, "resync", time.Hour, "apply a target that did not change again after this long (drift correction; 0: only what changed or failed)")
	f.StringVar(&o.ansiblePlaybook, "ansible-playbook", "ansible-playbook", "the ansible-playbook command")
	return cmd
}

// defaultAgentStateDir is /var/lib/fleetform-agent for root, else
// $XDG_STATE_HOME/fleetform-agent (~/.local/state/fleetform-agent).
func defaultAgentStateDir() string {
	if os.Geteuid() == 0 {
		return "/var/lib/fleetform-agent"
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fleetform-agent")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "state", "fleetform-agent")
	}
	return "fleetform-agent"
}

func (o *agentHostOptions) run(ctx context.Context, e *env) error {
	if o.gitops == "" || o.branch == "" || o.clusterType == "" {
		return command.Usage(errors.New("--gitops, --branch and --cluster-type are required"))
	}
	ro := host.RunOptions{Options: host.Options{Cluster: cmp.Or(o.hub.cluster, "check"), Repo: o.gitops, Branch: o.branch,
		Path: o.path, ClusterType: o.clusterType, StateDir: o.stateDir, Check: o.check, Resync: o.resync,
		AnsiblePlaybook: o.ansiblePlaybook, Logger: e.Logger}, HubURL: o.hub.hub, Heartbeat: o.hub.heartbeat,
		Once: o.once, Interval: o.interval}
	if !o.check {
		var err error
		if ro.TokenFile, ro.Token, err = o.hub.token(); err != nil {
			return err
		}
	}
	creds, err := fleet.Credentials("", nil, "", []string{o.gitops}, e.Logger)
	if err != nil {
		return err
	}
	ro.Credentials = creds
	err = host.Run(ctx, ro, func(r hub.Report) { printHostReport(e, r, o.check) })
	var oe *host.OptionsError
	switch {
	case errors.Is(err, host.ErrNotCompliant):
		return command.Reported(err)
	case errors.As(err, &oe):
		return command.Usage(err)
	}
	return err
}

func printHostReport(e *env, r hub.Report, check bool) {
	mode := ""
	if check {
		mode = " (check mode: nothing changed)"
	}
	fmt.Fprintf(e.Stdout, "%s at %.12s: %s%s\n", r.GitOpsPath, r.Revision, r.Status, mode)
	for _, d := range r.Deployments {
		fmt.Fprintf(e.Stdout, "  %-40s %-11s %.12s\n", d.DeploymentTarget, d.Status, d.Revision)
	}
	if r.Message != "" {
		fmt.Fprintln(e.Stdout, "  "+r.Message)
	}
}
