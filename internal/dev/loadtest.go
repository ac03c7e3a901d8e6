package dev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
)

type loadtestOptions struct {
	hub         command.Hub
	out         command.Output
	clusters    int
	duration    time.Duration
	concurrency int
	environment string
	clusterType string
	targets     int
	changeEvery int
	batch       int
	// wrk names the wrk script to write instead of posting reports.
	wrk string
}

// loadtestJSON is what `hub loadtest -o json` prints.
type loadtestJSON struct {
	Clusters    int `json:"clusters"`
	Concurrency int `json:"concurrency"`
	// Batch is how many clusters' reports one request carries (1: POST /api/v1/reports;
	// more: POST /api/v1/reports/batch with a relay token, as `hub relay` sends them).
	Batch     int     `json:"batch"`
	Seconds   float64 `json:"seconds"`
	Reports   int64   `json:"reports"`
	PerSecond float64 `json:"reportsPerSecond"`
	P50Ms     float64 `json:"p50Ms"`
	P99Ms     float64 `json:"p99Ms"`
	MaxMs     float64 `json:"maxMs"`
	Errors    int64   `json:"errors"`
	RolloutMs float64 `json:"rolloutMs"`
	// RegistrationSeconds is how long registering the clusters took (rotating the tokens of
	// those already registered).
	RegistrationSeconds float64 `json:"registrationSeconds"`
	// FirstRound is the clusters' first reports of the run, each a state change (the cluster
	// moves to the run's revision): from the start until the last of them was acknowledged.
	// Absent when the run ended before every cluster reported once.
	FirstRound *loadtestPhase `json:"firstRound,omitempty"`
	// Steady is the same after every cluster has reported once (the first round, where every
	// report is a change, is the most expensive); absent when the run ended before.
	Steady *loadtestPhase `json:"steady,omitempty"`
	// Counted is set when the hub's rollout counts every acknowledged report's final state.
	Counted  bool     `json:"counted"`
	Mismatch []string `json:"mismatch,omitempty"`
}

// loadtestPhase is the throughput and latency of the reports sent from FromSeconds on.
type loadtestPhase struct {
	FromSeconds float64 `json:"fromSeconds"`
	Reports     int     `json:"reports"`
	PerSecond   float64 `json:"reportsPerSecond"`
	P50Ms       float64 `json:"p50Ms"`
	P99Ms       float64 `json:"p99Ms"`
	MaxMs       float64 `json:"maxMs"`
}

// loadSample is one acknowledged report: when it was sent (since the start), how long it
// took, and whether it was its cluster's first of the run.
type loadSample struct {
	at, took time.Duration
	first    bool
}

func newLoadtestCmd(e *env) *cobra.Command {
	var o loadtestOptions
	cmd := &cobra.Command{
		Use: "loadtest",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform-dev loadtest --hub http://127.0.0.1:8080 --clusters 10000 --duration 30s --concurrency 64\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform-dev loadtest --hub http://127.0.0.1:8080 --clusters 10000 --wrk reports.lua",
		Short: "Load a hub with cluster reports and check that every acknowledged one is counted",
		Long: "loadtest registers --clusters clusters in --env (rotating the tokens of those already\n" +
			"registered), posts a desired state, then posts reports from --concurrency workers as fast as\n" +
			"the hub acknowledges them for --duration. A cluster's first report of the run moves it to the\n" +
			"new revision; then every --change-every'th report of a cluster changes a deployment's status\n" +
			"(the others only refresh the times, as heartbeats do; 0: none does). It prints reports/s,\n" +
			"latency percentiles and errors (of the whole run, of the clusters' first reports, and of the\n" +
			"steady state after them), and checks that the hub's rollout counts match the\n" +
			"last acknowledged report of every cluster (exit 1 when not). With --batch N, each request\n" +
			"carries N clusters' reports, each with its cluster's token, as `hub relay` forwards them\n" +
			"(with a relay token the loadtest issues); latencies are then those of the batches. Needs the\n" +
			"admin token; point it only at a hub you run for testing.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			c, err := o.hub.ClientWith(&http.Client{Timeout: time.Minute, Transport: &http.Transport{
				MaxIdleConns: o.concurrency, MaxIdleConnsPerHost: o.concurrency, IdleConnTimeout: time.Minute}})
			if err != nil {
				return err
			}
			if o.wrk != "" {
				return o.writeWrk(cmd.Context(), e, c)
			}
			doc, err := o.run(cmd.Context(), e, c)
			if err != nil {
				return err
			}
			if err := writeOut(e, o.out, doc, func(w io.Writer) error { return loadtestText(w, doc) }); err != nil {
				return err
			}
			if !doc.Counted || doc.Errors > 0 {
				return command.Reported(errors.New("a report failed, or the rollout does not count every report"))
			}
			return nil
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	f := cmd.Flags()
	f.IntVar(&o.clusters, "clusters", 10000, "clusters to register and report for")
	f.DurationVar(&o.duration, "duration", 30*time.Second, "how long to post reports")
	f.IntVar(&o.concurrency, "concurrency", 64, "reports in flight at once")
	f.StringVar(&o.environment, "env", "loadtest", "environment of the load-test clusters")
	f.StringVar(&o.clusterType, "cluster-type", "loadtest", "cluster type of the load-test clusters")
	f.IntVar(&o.targets, "targets", 3, "deployment targets scheduled on the cluster type")
	f.IntVar(&o.batch, "batch", 1, fmt.Sprintf("reports per request (1 to %d; more than 1: POST /api/v1/reports/batch, as hub relay sends them)", hub.MaxReportsPerBatch))
	f.StringVar(&o.wrk, "wrk", "", "register the clusters, post the desired state and write a wrk script to this file that posts their reports, one per request (MODE=heartbeat or change), instead of posting them")
	f.IntVar(&o.changeEvery, "change-every", 10, "every Nth report of a cluster changes a deployment's status (1: all; 0: none after its first, heartbeats only)")
	return cmd
}

func (o *loadtestOptions) check() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	if o.clusters < 1 || o.concurrency < 1 || o.duration <= 0 || o.targets < 1 {
		return command.Usage(errors.New("--clusters, --concurrency, --duration and --targets must be positive"))
	}
	if o.changeEvery < 0 {
		return command.Usage(errors.New("--change-every must not be negative"))
	}
	if o.batch < 1 || o.batch > hub.MaxReportsPerBatch {
		return command.Usage(fmt.Errorf("--batch must be 1 to %d", hub.MaxReportsPerBatch))
	}
	return nil
}

// clientWith is client with an injected *http.Client.
// loadCluster is one simulated cluster: its token and the state of its last acknowledged
// report. A cluster is only ever driven by one worker.
type loadCluster struct {
	name    string
	token   string
	client  *client.Client
	reports int
	acked   bool
	// observed is the observedAt of the last report: the next one is later by at least a
	// millisecond (the hub ignores a report not newer than the one it has).
	observed time.Time
	// progressing is the deployment target reported Progressing in the last acknowledged
	// report (-1: all Ready).
	progressing int
}

func (o *loadtestOptions) run(ctx context.Context, e *env, admin *client.Client) (loadtestJSON, error) {
	doc := loadtestJSON{Clusters: o.clusters, Concurrency: o.concurrency, Batch: o.batch}
	registering := time.Now()
	clusters, err := o.register(ctx, e, admin)
	if err != nil {
		return doc, err
	}
	doc.RegistrationSeconds = time.Since(registering).Seconds()
	revision, err := o.postDesired(ctx, admin)
	if err != nil {
		return doc, err
	}
	send, err := o.sender(ctx, admin, revision)
	if err != nil {
		return doc, err
	}
	e.Logger.Info("posting reports", "clusters", o.clusters, "concurrency", o.concurrency, "batch", o.batch, "duration", o.duration)

	var failures atomic.Int64
	workers := min(o.concurrency, len(clusters))
	samples := make([][]loadSample, workers)
	warmAt := make([]time.Duration, workers) // when the worker began its second round (-1: never)
	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range workers {
		var mine []*loadCluster // every cluster is driven by one worker: its reports stay in order
		for i := w; i < len(clusters); i += workers {
			mine = append(mine, clusters[i])
		}
		warmAt[w] = -1
		n := min(o.batch, len(mine)) // a request never carries a cluster twice
		wg.Go(func() {
			batch := make([]*loadCluster, n)
			for i := 0; runCtx.Err() == nil; i += n {
				if i >= len(mine) && warmAt[w] == -1 {
					warmAt[w] = time.Since(start)
				}
				for k := range batch {
					batch[k] = mine[(i+k)%len(mine)]
				}
				t0 := time.Now()
				for k, err := range send(batch) {
					c := batch[k]
					if err != nil {
						failures.Add(1)
						e.Logger.Warn("report failed", "cluster", c.name, "error", err.Error())
						continue
					}
					samples[w] = append(samples[w], loadSample{at: t0.Sub(start), took: time.Since(t0), first: c.reports == 1})
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(samples...)
	doc.Seconds, doc.Reports, doc.Errors = elapsed.Seconds(), int64(len(all)), failures.Load()
	total := summarize(all, 0, elapsed)
	doc.PerSecond, doc.P50Ms, doc.P99Ms, doc.MaxMs = total.PerSecond, total.P50Ms, total.P99Ms, total.MaxMs
	if warm := slices.Max(warmAt); !slices.Contains(warmAt, -1) && warm < elapsed {
		steady := summarize(all, warm, elapsed)
		doc.Steady = &steady
	}
	if first := firstRound(all, len(clusters)); first != nil {
		doc.FirstRound = first
	}
	return doc, o.verify(ctx, admin, clusters, revision, &doc)
}

func (o *loadtestOptions) target(i int) string {
	return o.targetPrefix() + strconv.Itoa(i)
}

// targetPrefix is what the names of the run's deployment targets start with.
func (o *loadtestOptions) targetPrefix() string { return o.clusterType + "-target-" }

// sender returns the function that sends the next report of each of a batch's clusters and
// records each acknowledged one: one request per report, or batches with a relay token.
func (o *loadtestOptions) sender(ctx context.Context, admin *client.Client, revision string) (func([]*loadCluster) []error, error) {
	if o.batch == 1 {
		return func(cs []*loadCluster) []error {
			c := cs[0]
			r, progressing := o.next(c, revision)
			err := c.client.Report(ctx, r)
			if err == nil {
				c.acknowledged(progressing)
			}
			return []error{err}
		}, nil
	}
	expires := time.Now().Add(o.duration + time.Hour)
	tok, err := admin.CreateToken(ctx, api.TokenRequest{Name: "loadtest-relay", Kind: hub.TokenRelay, ExpiresAt: &expires})
	if err != nil {
		return nil, fmt.Errorf("issue a relay token: %w", err)
	}
	relay := admin.WithToken(tok.Token)
	return func(cs []*loadCluster) []error {
		errs := make([]error, len(cs))
		reports := make([]api.SignedReport, len(cs))
		progressing := make([]int, len(cs))
		for i, c := range cs {
			reports[i].Token = c.token
			reports[i].Report, progressing[i] = o.next(c, revision)
		}
		results, err := relay.ReportBatch(ctx, reports)
		for i, c := range cs {
			switch {
			case err != nil:
				errs[i] = err
			case !results[i].Accepted:
				errs[i] = fmt.Errorf("%d %s: %s", results[i].Status, results[i].Code, results[i].Error)
			default:
				c.acknowledged(progressing[i])
			}
		}
		return errs
	}, nil
}

// next is c's next report (deterministic from its count) and the deployment target it
// reports Progressing (-1: none).
func (o *loadtestOptions) next(c *loadCluster, revision string) (hub.Report, int) {
	progressing := -1
	if o.changeEvery > 0 && c.reports%o.changeEvery == 0 && (c.reports/o.changeEvery)%2 == 0 {
		progressing = (c.reports / o.changeEvery / 2) % o.targets
	}
	observed := time.Now().UTC().Truncate(time.Millisecond)
	if !observed.After(c.observed) {
		observed = c.observed.Add(time.Millisecond)
	}
	c.observed = observed
	r := hub.Report{Cluster: c.name, Revision: revision, Status: hub.Compliant, ObservedAt: observed}
	for i := range o.targets {
		st := hub.Ready
		if i == progressing {
			st = hub.DeploymentProgress
		}
		r.Deployments = append(r.Deployments, hub.DeploymentReport{DeploymentTarget: o.target(i), Namespace: "loadtest", Status: st, Revision: "v1"})
	}
	return r, progressing
}

// acknowledged records that c's report, with progressing, is durable.
func (c *loadCluster) acknowledged(progressing int) {
	c.reports++
	c.acked, c.progressing = true, progressing
}

// register registers the clusters (rotating existing ones' tokens) with a few workers.
func (o *loadtestOptions) register(ctx context.Context, e *env, admin *client.Client) ([]*loadCluster, error) {
	e.Logger.Info("registering clusters", "clusters", o.clusters, "environment", o.environment)
	regs := make([]api.ClusterRegistration, o.clusters)
	for i := range regs {
		regs[i] = api.ClusterRegistration{Name: fmt.Sprintf("%s-%06d", o.environment, i), Environment: o.environment, ClusterType: o.clusterType}
	}
	clusters := make([]*loadCluster, 0, o.clusters)
	for start := 0; start < len(regs); start += registrationBatch {
		tokens, err := admin.RegisterClusters(ctx, regs[start:min(start+registrationBatch, len(regs))], true)
		if err != nil {
			return nil, fmt.Errorf("register %s…: %w", regs[start].Name, err)
		}
		for _, t := range tokens {
			clusters = append(clusters, &loadCluster{name: t.Name, token: t.Token, client: admin.WithToken(t.Token), progressing: -1})
		}
	}
	return clusters, nil
}

// registrationBatch is how many clusters one registration request carries.
const registrationBatch = 5000

// verify checks the rollout against the last acknowledged report of every cluster.
func (o *loadtestOptions) verify(ctx context.Context, admin *client.Client, clusters []*loadCluster, revision string, doc *loadtestJSON) error {
	t0 := time.Now()
	ro, err := admin.Rollout(ctx, o.environment)
	doc.RolloutMs = float64(time.Since(t0).Microseconds()) / 1000
	if err != nil {
		return err
	}
	if ro.Revision != revision {
		doc.Mismatch = append(doc.Mismatch, fmt.Sprintf("rollout is at revision %s, not %s (another desired state was posted meanwhile)", ro.Revision, revision))
		return nil
	}
	want := map[string]hub.TargetRollout{}
	for i := range o.targets {
		want[o.target(i)] = hub.TargetRollout{Clusters: len(clusters)}
	}
	for _, c := range clusters {
		for i := range o.targets {
			t := want[o.target(i)]
			switch {
			case !c.acked:
				t.Unknown++
			case c.progressing == i:
				t.Progressing++
			default:
				t.Compliant++
			}
			want[o.target(i)] = t
		}
	}
	// A cluster that reported in an earlier run but not in this one (or one of an earlier
	// run with more clusters) is at another revision (progressing), or unknown.
	for _, got := range ro.Targets {
		w := want[got.DeploymentTarget]
		others := w.Unknown + got.Clusters - w.Clusters
		extra := got.Progressing - w.Progressing
		if got.Clusters < w.Clusters || got.Compliant != w.Compliant || got.Failed != 0 ||
			extra < 0 || extra > others || got.Unknown != others-extra {
			doc.Mismatch = append(doc.Mismatch, fmt.Sprintf("%s: hub counts %d clusters, %d compliant, %d progressing, %d failed, %d unknown; acknowledged reports say %d, %d, %d, 0, %d (never reported in this run)",
				got.DeploymentTarget, got.Clusters, got.Compliant, got.Progressing, got.Failed, got.Unknown,
				w.Clusters, w.Compliant, w.Progressing, w.Unknown))
		}
	}
	doc.Counted = len(doc.Mismatch) == 0 && len(ro.Targets) == o.targets
	return nil
}

// summarize is the throughput and latency of the samples sent from `from` on, in a run that
// lasted elapsed.
func summarize(samples []loadSample, from, elapsed time.Duration) loadtestPhase {
	var took []time.Duration
	for _, s := range samples {
		if s.at >= from {
			took = append(took, s.took)
		}
	}
	slices.Sort(took)
	out := loadtestPhase{FromSeconds: from.Seconds(), Reports: len(took), P50Ms: percentileMs(took, 0.50), P99Ms: percentileMs(took, 0.99)}
	if len(took) > 0 {
		out.PerSecond = float64(len(took)) / (elapsed - from).Seconds()
		out.MaxMs = float64(took[len(took)-1].Microseconds()) / 1000
	}
	return out
}

// firstRound is the throughput and latency of the clusters' first reports of the run, from
// the start until the last of them was acknowledged; nil unless every one of the clusters
// has one.
func firstRound(samples []loadSample, clusters int) *loadtestPhase {
	var took []time.Duration
	var end time.Duration
	for _, s := range samples {
		if s.first {
			took = append(took, s.took)
			end = max(end, s.at+s.took)
		}
	}
	if len(took) < clusters || end <= 0 {
		return nil
	}
	slices.Sort(took)
	return &loadtestPhase{Reports: len(took), PerSecond: float64(len(took)) / end.Seconds(), P50Ms: percentileMs(took, 0.50),
		P99Ms: percentileMs(took, 0.99), MaxMs: float64(took[len(took)-1].Microseconds()) / 1000}
}

func percentileMs(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(int(float64(len(sorted))*p), len(sorted)-1)
	return float64(sorted[i].Microseconds()) / 1000
}

func loadtestText(w io.Writer, doc loadtestJSON) error {
	inFlight := fmt.Sprintf("%d in flight", doc.Concurrency)
	if doc.Batch > 1 {
		inFlight = fmt.Sprintf("%d batches of %d in flight", doc.Concurrency, doc.Batch)
	}
	fmt.Fprintf(w, "%d reports in %.1fs from %d clusters, %s: %.0f reports/s\n",
		doc.Reports, doc.Seconds, doc.Clusters, inFlight, doc.PerSecond)
	fmt.Fprintf(w, "latency: p50 %.1f ms, p99 %.1f ms, max %.1f ms; errors: %d\n", doc.P50Ms, doc.P99Ms, doc.MaxMs, doc.Errors)
	fmt.Fprintf(w, "registration: %.1fs\n", doc.RegistrationSeconds)
	if fr := doc.FirstRound; fr != nil {
		fmt.Fprintf(w, "first report of every cluster (a state change): %d reports in %.1fs, %.0f reports/s, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			fr.Reports, float64(fr.Reports)/fr.PerSecond, fr.PerSecond, fr.P50Ms, fr.P99Ms, fr.MaxMs)
	}
	if st := doc.Steady; st != nil {
		fmt.Fprintf(w, "after every cluster reported once (from %.1fs): %d reports, %.0f reports/s, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			st.FromSeconds, st.Reports, st.PerSecond, st.P50Ms, st.P99Ms, st.MaxMs)
	}
	fmt.Fprintf(w, "rollout read in %.1f ms\n", doc.RolloutMs)
	if doc.Counted {
		fmt.Fprintln(w, "every acknowledged report is counted in the rollout")
	}
	for _, m := range doc.Mismatch {
		fmt.Fprintln(w, "MISMATCH:", m)
	}
	return nil
}
