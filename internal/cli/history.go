package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

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
