package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
)

type historyOptions struct {
	hub   hubOptions
	out   command.Output
	f     hub.HistoryFilter
	since string
}

func newHistoryCmd(e *env) *cobra.Command {
	var o historyOptions
	cmd := &cobra.Command{
		Use: "history",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform history --hub https://hub.example.com --env prod --since 24h\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform history --hub https://hub.example.com --cluster edge-munich-1 --kind cluster,deployment --limit 20\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform history --hub https://hub.example.com --kind authoring,approval,promotion --actor ada@example.com -o json",
		Short: "Show the hub's history: desired revisions, status transitions, promotions, who changed what",
		Long: "history prints the hub's events, newest first: desired revisions posted by apply, every\n" +
			"cluster and deployment status transition, registrations, and every write with who made it\n" +
			"and why it was allowed (authoring, approvals, promotions, overrides, token changes, failed\n" +
			"sign-ins: the actor block of -o json).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.Check(); err != nil {
				return err
			}
			if err := o.parseSince(time.Now()); err != nil {
				return err
			}
			c, err := o.hub.Client()
			if err != nil {
				return err
			}
			return o.run(cmd.Context(), e, c)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.f.Environment, "env", "", "only this environment")
	f.StringVar(&o.f.Workload, "workload", "", "only this workload")
	f.StringVar(&o.f.ClusterType, "cluster-type", "", "only this cluster type")
	f.StringVar(&o.f.Cluster, "cluster", "", "only this cluster")
	f.StringVar(&o.f.Kind, "kind", "", "only these kinds, separated by commas: desired, cluster, deployment, registration, promotion, approval, authoring, override, token, signin")
	f.StringVar(&o.f.Actor, "actor", "", "only writes by this person or token (subject, email, name or token name)")
	f.StringVar(&o.f.Group, "group", "", "only writes by members of this group (or allowed by this role)")
	f.StringVar(&o.since, "since", "", "only events since this time (RFC 3339) or this long ago (24h)")
	f.IntVar(&o.f.Limit, "limit", 100, "at most this many events")
	return cmd
}

// run asks for one event more than --limit, to tell whether the limit cut the history.
func (o *historyOptions) run(ctx context.Context, e *env, c *client.Client) error {
	if o.f.Limit <= 0 || o.f.Limit > hub.MaxHistoryLimit {
		return command.Usagef("--limit %d: want 1 to %d", o.f.Limit, hub.MaxHistoryLimit)
	}
	f := o.f
	f.Limit = min(o.f.Limit+1, hub.MaxHistoryLimit)
	events, err := c.History(ctx, f)
	if err != nil {
		return err
	}
	doc := api.HistoryList{Events: events}
	if len(events) > o.f.Limit {
		doc.Events, doc.Truncated = events[:o.f.Limit], true
	}
	if doc.Events == nil {
		doc.Events = []hub.Event{}
	}
	if len(doc.Events) == 0 && o.f.Workload != "" {
		if err := knownWorkload(ctx, c, o.f.Workload); err != nil {
			return err
		}
	}
	doc.Summary = hub.SummariseHistory(doc.Events)
	return writeOut(e, o.out, doc, func(w io.Writer) error { return historyText(w, doc, o.f.Limit) })
}

// knownWorkload is an error unless some environment's latest desired state has the workload.
func knownWorkload(ctx context.Context, c *client.Client, workload string) error {
	envs, err := c.Environments(ctx)
	if err != nil {
		return err
	}
	for _, env := range envs {
		ro, err := c.Rollout(ctx, env)
		if hub.ErrorCode(err) == hub.CodeNotFound {
			continue
		}
		if err != nil {
			return err
		}
		for _, t := range ro.Targets {
			if t.Workload == workload {
				return nil
			}
		}
	}
	return fmt.Errorf("workload %q is unknown: no environment's latest desired state has it and the hub recorded nothing of it (fleetform status lists the workloads)", workload)
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
		return command.Usagef("--since %q: want an RFC 3339 time or a duration such as 24h", o.since)
	}
	o.f.Since = now.Add(-d)
	return nil
}

func historyText(w io.Writer, doc api.HistoryList, limit int) error {
	if err := eventsText(w, doc.Events); err != nil {
		return err
	}
	if len(doc.Summary) > 0 {
		fmt.Fprintln(w, "\nPer revision:")
		t := command.NewTable(w, "ENVIRONMENT", "KIND", "REVISION", "EVENTS", "FROM", "TO", "SUMMARY")
		for _, s := range doc.Summary {
			t.Row(s.Environment, s.Kind, orDash(shortSHA(s.Revision)), strconv.Itoa(s.Events), s.First.UTC().Format(time.RFC3339),
				s.Last.UTC().Format(time.RFC3339), orDash(summaryText(s)))
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if doc.Truncated {
		fmt.Fprintf(w, "\nOnly the latest %d events: --limit cut older ones (raise --limit, or narrow with --since, --env, --workload).\n", limit)
	}
	return nil
}

// summaryText is a revision's transitions by state ("23 -> Ready, 2 -> Failed"), else its message.
func summaryText(s hub.RevisionSummary) string {
	parts := make([]string, 0, len(s.To))
	for _, state := range slices.Sorted(maps.Keys(s.To)) {
		parts = append(parts, fmt.Sprintf("%d -> %s", s.To[state], state))
	}
	if len(parts) == 0 {
		return s.Message
	}
	return strings.Join(parts, ", ")
}

func eventsText(w io.Writer, events []hub.Event) error {
	t := command.NewTable(w, "TIME", "KIND", "ENVIRONMENT", "WHERE", "REVISION", "CHANGE", "MESSAGE", "BY")
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
		t.Row(ev.Time.UTC().Format(time.RFC3339), ev.Kind, ev.Environment, orDash(where), orDash(shortSHA(ev.Revision)),
			orDash(change), ev.Message, orDash(ev.Actor.String()))
	}
	return t.Flush()
}
