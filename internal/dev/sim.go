package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/dev/sim"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
)

type simOptions struct {
	hub             command.Hub
	out             command.Output
	gitops, branch  string
	path, env       string
	prefix          string
	perType         int
	failRate        float64
	lag             time.Duration
	poll, heartbeat time.Duration
	workers         int
	seed            uint64
	once            bool
}

// simJSON is what `sim --once -o json` prints.
type simJSON struct {
	Environment  string  `json:"environment"`
	Revision     string  `json:"revision"`
	ClusterTypes int     `json:"clusterTypes"`
	Clusters     int     `json:"clusters"`
	Reports      int64   `json:"reports"`
	Errors       int64   `json:"errors"`
	Seconds      float64 `json:"seconds"`
	// RegisterSeconds and ReportSeconds split Seconds: registration, then the round of
	// reports (ReportsPerSecond is over the round).
	RegisterSeconds  float64 `json:"registerSeconds"`
	ReportSeconds    float64 `json:"reportSeconds"`
	ReportsPerSecond float64 `json:"reportsPerSecond"`
}

func newSimCmd(e *env) *cobra.Command {
	var o simOptions
	cmd := &cobra.Command{
		Use: "sim",
		Example: "  # 25 simulated clusters per cluster type report what dev's GitOps branch holds, 10% failing\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform-dev sim --hub http://127.0.0.1:8080 --gitops ./gitops.git --env dev --clusters-per-type 25 --fail-rate 0.1 --once",
		Short: "Simulate a fleet reporting an environment's GitOps revision to the hub",
		Long: "sim registers --clusters-per-type clusters for every cluster type folder of the environment's\n" +
			"GitOps branch (named sim-<clusterType>-<i>, see --name-prefix; the tokens of those already registered are\n" +
			"rotated), then makes every cluster report the branch's revision with each deployment target\n" +
			"found under its cluster type's folder: Ready, or Failed with probability --fail-rate (stable\n" +
			"per cluster, target and revision), each within --lag. --once reports once and exits;\n" +
			"otherwise it follows the branch (read every --poll) and re-sends every --heartbeat.\n" +
			"Needs the admin token in " + command.HubTokenEnv + ".",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.StringVar(&o.gitops, "gitops", "", "GitOps repository (path or URL; required)")
	f.StringVar(&o.env, "env", "", "environment (required)")
	f.StringVar(&o.branch, "branch", "", "GitOps branch (default: the environment name)")
	f.StringVar(&o.path, "path", "", "folder of the environment inside the repository")
	f.StringVar(&o.prefix, "name-prefix", "sim", "clusters are named <prefix>-<clusterType>-<i> (one prefix per simulated environment)")
	f.IntVar(&o.perType, "clusters-per-type", 10, "simulated clusters per cluster type")
	f.Float64Var(&o.failRate, "fail-rate", 0, "probability that a cluster fails a deployment target (0 to 1)")
	f.DurationVar(&o.lag, "lag", 0, "longest time a cluster takes to apply a new revision")
	f.DurationVar(&o.poll, "poll", 10*time.Second, "how often the branch is read")
	f.DurationVar(&o.heartbeat, "heartbeat", 2*time.Minute, "how often unchanged state is re-sent (keep it under the hub's --stale-after)")
	f.IntVar(&o.workers, "workers", 64, "concurrent reports")
	f.Uint64Var(&o.seed, "seed", 1, "seed of failures and lags")
	f.BoolVar(&o.once, "once", false, "report once and exit")
	_ = cmd.MarkFlagRequired("gitops")
	_ = cmd.MarkFlagRequired("env")
	return cmd
}

func (o *simOptions) check() error {
	switch {
	case o.perType < 1:
		return command.Usage(errors.New("--clusters-per-type must be at least 1"))
	case o.failRate < 0 || o.failRate > 1:
		return command.Usage(errors.New("--fail-rate is a probability, from 0 to 1"))
	case o.workers < 1:
		return command.Usage(errors.New("--workers must be at least 1"))
	}
	return o.out.Check()
}

func (o *simOptions) run(ctx context.Context, e *env) error {
	admin, err := o.hub.ClientWith(&http.Client{Timeout: time.Minute, Transport: &http.Transport{
		MaxIdleConns: o.workers, MaxIdleConnsPerHost: o.workers, IdleConnTimeout: time.Minute}})
	if err != nil {
		return err
	}
	branch := o.branch
	if branch == "" {
		branch = o.env
	}
	creds, err := gitauth.New(gitauth.Config{Logger: e.Logger, Trusted: []string{o.gitops}})
	if err != nil {
		return command.Usage(fmt.Errorf("credentials: %w", err))
	}
	src := sim.GitSource{Writer: gitops.NewWriter(gitops.Options{Logger: e.Logger, CacheDir: os.Getenv("FLEETFORM_CACHE_DIR"), Credentials: creds}),
		Location: o.gitops, Branch: branch, Path: o.path}
	s := sim.New(simHub{admin}, src, sim.Options{Environment: o.env, Prefix: o.prefix, ClustersPerType: o.perType, FailRate: o.failRate,
		Lag: o.lag, Poll: o.poll, Heartbeat: o.heartbeat, Workers: o.workers, Seed: o.seed, Logger: e.Logger})
	start := time.Now()
	if err := s.Run(ctx, o.once); err != nil {
		return err
	}
	if !o.once {
		return nil
	}
	register, round := s.Took()
	doc := simJSON{Environment: o.env, Revision: s.Revision(), ClusterTypes: s.ClusterTypes(), Clusters: s.Clusters(),
		Reports: s.Stats().Reports.Load(), Errors: s.Stats().Errors.Load(), Seconds: time.Since(start).Seconds(),
		RegisterSeconds: register.Seconds(), ReportSeconds: round.Seconds()}
	doc.ReportsPerSecond = float64(doc.Reports) / max(doc.ReportSeconds, 1e-3)
	if err := writeOut(e, o.out, doc, func(w io.Writer) error { return simText(w, doc) }); err != nil {
		return err
	}
	if doc.Errors > 0 {
		return fmt.Errorf("%d report(s) failed", doc.Errors)
	}
	return nil
}

func simText(w io.Writer, d simJSON) error {
	_, err := fmt.Fprintf(w, "%d simulated clusters of %d cluster types in %s reported revision %s: %d reports in %.1f s (%.0f/s; registration %.1f s), %d errors\n",
		d.Clusters, d.ClusterTypes, d.Environment, shortSHA(d.Revision), d.Reports, d.ReportSeconds, d.ReportsPerSecond, d.RegisterSeconds, d.Errors)
	return err
}

// simHub adapts the hub client to sim.Hub: registrations with rotation, reports with each
// cluster's token over the admin client's connections.
type simHub struct{ admin *client.Client }

func (h simHub) RegisterClusters(ctx context.Context, cs []hub.Cluster) ([]string, error) {
	regs := make([]api.ClusterRegistration, len(cs))
	for i, c := range cs {
		regs[i] = api.ClusterRegistration{Name: c.Name, Environment: c.Environment, ClusterType: c.ClusterType, Labels: c.Labels}
	}
	issued, err := h.admin.RegisterClusters(ctx, regs, true)
	if err != nil {
		return nil, err
	}
	tokens := make([]string, len(issued))
	for i, t := range issued {
		tokens[i] = t.Token
	}
	return tokens, nil
}

func (h simHub) Report(ctx context.Context, token string, r hub.Report) error {
	return h.admin.WithToken(token).Report(ctx, r)
}
