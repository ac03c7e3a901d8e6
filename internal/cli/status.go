package cli

import (
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/pipeline"
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
	return t.flush()
}

// hubOutputOptions are the flags of a command that asks the hub something and prints it.
type hubOutputOptions struct {
	hub hubOptions
	out outputOption
}

func newDiffCmd(e *env) *cobra.Command {
	var o hubOutputOptions
	cmd := &cobra.Command{
		Use:     "diff ENV1 ENV2",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform diff --hub https://hub.example.com stage prod",
		Short:   "Compare two environments workload by workload",
		Long: "diff compares the latest desired states of two environments on the hub: per workload, the\n" +
			"deployment targets, cluster types, versions reported by application CI and the composed\n" +
			"configuration values that differ.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			d, err := c.Diff(cmd.Context(), args[0], args[1])
			if err != nil {
				return failed(ExitFailed, err)
			}
			return writeOut(e, o.out, d, func(w io.Writer) error { return diffText(w, d) })
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	return cmd
}

func diffText(w io.Writer, d hub.EnvDiff) error {
	t := newTable(w, "WORKLOAD", "SAME", "CLUSTER TYPES ("+d.From+")", "CLUSTER TYPES ("+d.To+")",
		"VERSIONS ("+d.From+")", "VERSIONS ("+d.To+")")
	for _, wd := range d.Workloads {
		t.row(wd.Workload, yesNo(wd.Same), pipeline.ListOrNone(wd.From.ClusterTypes), pipeline.ListOrNone(wd.To.ClusterTypes),
			versionsText(wd.From.Versions), versionsText(wd.To.Versions))
	}
	if err := t.flush(); err != nil {
		return err
	}
	for _, wd := range d.Workloads {
		for _, c := range wd.Config {
			fmt.Fprintf(w, "%s: config %s: %s: %s, %s: %s\n", wd.Workload, c.Key, d.From, valuesText(c.From), d.To, valuesText(c.To))
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// versionsText lists target=version pairs, sorted.
func versionsText(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func valuesText(vs []any) string {
	if len(vs) == 0 {
		return "(unset)"
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, fmt.Sprint(v))
	}
	return strings.Join(parts, " | ")
}

type historyOptions struct {
	hub   hubOptions
	out   outputOption
	f     hub.HistoryFilter
	since string
}

func newHistoryCmd(e *env) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use: "history",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform history --hub https://hub.example.com --env prod --since 24h\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform history --hub https://hub.example.com --cluster edge-munich-1 --kind state --limit 20",
		Short: "Show the hub's history: desired revisions, status transitions, promotions",
		Long: "history prints the hub's events, newest first: desired revisions posted by apply, every\n" +
			"cluster and deployment status transition, registrations, promotions and approvals.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.check(); err != nil {
				return err
			}
			if err := o.parseSince(time.Now()); err != nil {
				return err
			}
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			events, err := c.History(cmd.Context(), o.f)
			if err != nil {
				return failed(ExitFailed, err)
			}
			if events == nil {
				events = []hub.Event{}
			}
			doc := api.HistoryList{Events: events}
			return writeOut(e, o.out, doc, func(w io.Writer) error { return historyText(w, events) })
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.f.Environment, "env", "", "only this environment")
	f.StringVar(&o.f.Workload, "workload", "", "only this workload")
	f.StringVar(&o.f.ClusterType, "cluster-type", "", "only this cluster type")
	f.StringVar(&o.f.Cluster, "cluster", "", "only this cluster")
	f.StringVar(&o.f.Kind, "kind", "", "only this kind: desired, cluster, deployment, registration, promotion or approval")
	f.StringVar(&o.since, "since", "", "only events since this time (RFC 3339) or this long ago (24h)")
	f.IntVar(&o.f.Limit, "limit", 100, "at most this many events")
	return cmd
}

func (o *historyOptions) parseSince(now time.Time) error {
	if o.since == "" {
		return nil
	}
	if t, err := time.Parse(time.RFC3339, o.since); err == nil {
		o.f.Since = t
		return nil
	}
	d, err := time.ParseDuration(o.since)
	if err != nil || d < 0 {
		return failed(ExitUsage, fmt.Errorf("--since %q: want an RFC 3339 time or a duration such as 24h", o.since))
	}
	o.f.Since = now.Add(-d)
	return nil
}

func historyText(w io.Writer, events []hub.Event) error {
	t := newTable(w, "TIME", "KIND", "ENVIRONMENT", "WHERE", "REVISION", "CHANGE", "MESSAGE")
	for _, ev := range events {
		where := ev.Cluster
		if where == "" {
			where = ev.ClusterType
		}
		if ev.DeploymentTarget != "" {
			where += "/" + ev.DeploymentTarget
		}
		change := ""
		if ev.From != "" || ev.To != "" {
			change = orDash(ev.From) + " -> " + orDash(ev.To)
		}
		t.row(ev.Time.UTC().Format(time.RFC3339), ev.Kind, ev.Environment, orDash(where), orDash(shortSHA(ev.Revision)),
			orDash(change), ev.Message)
	}
	return t.flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

type driftOptions struct {
	hub         hubOptions
	out         outputOption
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
			c, err := o.hub.clientFor(o.out)
			if err != nil {
				return err
			}
			d, err := c.Drift(cmd.Context(), o.environment, o.behind)
			if err != nil {
				return failed(ExitFailed, err)
			}
			return writeOut(e, o.out, d, func(w io.Writer) error { return driftText(w, d) })
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
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
	t := newTable(w, "PROBLEM", "CLUSTER", "CLUSTER TYPE", "DETAIL")
	for _, c := range d.Behind {
		t.row("behind", c.Name, c.ClusterType, "at "+shortSHA(c.Revision))
	}
	for _, f := range d.Failing {
		t.row("failing deployment", f.Cluster, f.ClusterType, f.DeploymentTarget+" Failed since "+f.Since.UTC().Format(time.RFC3339))
	}
	for _, c := range d.FailingClusters {
		t.row("failing cluster", c.Name, c.ClusterType, strings.TrimSpace(string(c.Status)+" "+c.Message))
	}
	for _, c := range d.Silent {
		detail := "never reported"
		if c.Reported {
			detail = "last report " + c.ReceivedAt.UTC().Format(time.RFC3339)
		}
		t.row("silent", c.Name, c.ClusterType, detail)
	}
	for _, c := range d.WrongPath {
		t.row("wrong path", c.Name, c.ClusterType, "reconciles "+c.GitOpsPath)
	}
	return t.flush()
}

type approveOptions struct {
	hub         hubOptions
	out         outputOption
	environment string
	commit      string
	by          string
}

// fullSHA is a full git commit SHA (SHA-1 or SHA-256).
var fullSHA = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

func newApproveCmd(e *env) *cobra.Command {
	var o approveOptions
	cmd := &cobra.Command{
		Use:     "approve",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform approve --hub https://hub.example.com --env prod --commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b --by alice",
		Short:   "Approve a control-plane commit for promotion into an environment",
		Long: "approve records on the hub that --commit may be promoted into --env (for environments whose\n" +
			"promotion requires an approval), with who approved and when. Needs the admin token.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.check(); err != nil {
				return err
			}
			if o.by == "" {
				return failed(ExitUsage, fmt.Errorf("--by is required (default $FLEETFORM_ACTOR, $GITHUB_ACTOR or $USER)"))
			}
			if !fullSHA.MatchString(o.commit) {
				return failed(ExitUsage, fmt.Errorf("--commit %q: give the full 40-character commit SHA (git rev-parse %s): an approval is for one exact commit", o.commit, o.commit))
			}
			c, err := o.hub.client()
			if err != nil {
				return err
			}
			if err := c.Approve(cmd.Context(), o.environment, o.commit, o.by); err != nil {
				return failed(ExitFailed, err)
			}
			doc := api.Approval{Environment: o.environment, Commit: o.commit, By: o.by}
			return writeOut(e, o.out, doc, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "approved %s for %s by %s\n", shortSHA(o.commit), o.environment, o.by)
				return err
			})
		},
	}
	o.hub.bindRequired(cmd)
	o.out.bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.environment, "env", "", "environment the commit may be promoted into (required)")
	f.StringVar(&o.commit, "commit", "", "control-plane commit (required)")
	f.StringVar(&o.by, "by", defaultActor(), "who approves; default $FLEETFORM_ACTOR, $GITHUB_ACTOR or $USER")
	_ = cmd.MarkFlagRequired("env")
	_ = cmd.MarkFlagRequired("commit")
	return cmd
}

func shortSHA(s string) string { return s[:min(len(s), 12)] }
