// Package sim is a fleet simulator: it registers N clusters per cluster type of an
// environment with the hub and makes each report the environment's GitOps revision with every
// deployment target found under its cluster type's folder, Ready or (with a probability)
// Failed, after a lag. It drives demos, the promotion flow and load tests.
package sim

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Hub is what the simulator needs of the hub.
type Hub interface {
	// RegisterClusters registers clusters (rotating the tokens of existing ones) and returns
	// their tokens in order.
	RegisterClusters(ctx context.Context, cs []hub.Cluster) ([]string, error)
	// Report posts a cluster's report with its token.
	Report(ctx context.Context, token string, r hub.Report) error
}

// Source reads the environment's GitOps branch.
type Source interface {
	// Folders returns the branch's commit and, per cluster-type folder, the deployment
	// target folders (see gitops.Writer.Folders); "" when the branch does not exist.
	Folders(ctx context.Context) (commit string, folders map[string][]string, err error)
}

// Options configure a Simulator.
type Options struct {
	Environment     string
	ClustersPerType int
	// Prefix starts the clusters' names: <Prefix>-<clusterType>-<i> (default "sim"). A
	// cluster belongs to one environment, so simulating several environments with the
	// same cluster types needs one prefix each.
	Prefix string
	// FailRate is the probability that a cluster fails a deployment target at a revision
	// (stable for that cluster, target and revision).
	FailRate float64
	// Lag is the longest a cluster takes to apply a new revision (each waits a random part).
	Lag time.Duration
	// Poll is how often the branch is read; Heartbeat how often unchanged state is re-sent.
	Poll, Heartbeat time.Duration
	// Workers is the number of concurrent reports.
	Workers int
	// Seed makes failures and lags reproducible.
	Seed   uint64
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Simulator is a simulated fleet.
type Simulator struct {
	hub      Hub
	source   Source
	opts     Options
	clusters []simCluster
	types    int
	revision string
	stats    Stats
	// registered and reported are how long the latest registration and round took.
	registered, reported time.Duration
}

type simCluster struct {
	name, clusterType, token string
}

// Stats count what the simulator sent.
type Stats struct {
	Reports, Errors atomic.Int64
}

// New returns a simulator; call Register, then Round or Run.
func New(h Hub, src Source, opts Options) *Simulator {
	if opts.Prefix == "" {
		opts.Prefix = "sim"
	}
	if opts.Workers <= 0 {
		opts.Workers = 64
	}
	if opts.Poll <= 0 {
		opts.Poll = 10 * time.Second
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 2 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Simulator{hub: h, source: src, opts: opts}
}

// Stats returns the counters.
func (s *Simulator) Stats() *Stats { return &s.stats }

// Clusters is the number of simulated clusters.
func (s *Simulator) Clusters() int { return len(s.clusters) }

// ClusterTypes is the number of cluster types of the simulated clusters.
func (s *Simulator) ClusterTypes() int { return s.types }

// Took returns how long the latest registration and the latest round took.
func (s *Simulator) Took() (register, round time.Duration) { return s.registered, s.reported }

// Revision is the revision of the latest round.
func (s *Simulator) Revision() string { return s.revision }

// ClusterName is the name of simulated cluster i of a cluster type.
func ClusterName(prefix, clusterType string, i int) string {
	return fmt.Sprintf("%s-%s-%d", prefix, clusterType, i)
}

// registerBatch bounds one registration request.
const registerBatch = 5000

// Register registers ClustersPerType clusters for every cluster type of folders.
func (s *Simulator) Register(ctx context.Context, folders map[string][]string) error {
	var all []hub.Cluster
	for _, ct := range slices.Sorted(maps.Keys(folders)) {
		for i := range s.opts.ClustersPerType {
			all = append(all, hub.Cluster{Name: ClusterName(s.opts.Prefix, ct, i), Environment: s.opts.Environment, ClusterType: ct,
				Labels: map[string]string{"fleetform.io/simulated": "true"}})
		}
	}
	start := time.Now()
	defer func() { s.registered = time.Since(start) }()
	s.clusters, s.types = s.clusters[:0], len(folders)
	for from := 0; from < len(all); from += registerBatch {
		batch := all[from:min(from+registerBatch, len(all))]
		tokens, err := s.hub.RegisterClusters(ctx, batch)
		if err != nil {
			return fmt.Errorf("register clusters %s…: %w", batch[0].Name, err)
		}
		for i, c := range batch {
			s.clusters = append(s.clusters, simCluster{name: c.Name, clusterType: c.ClusterType, token: tokens[i]})
		}
	}
	s.opts.Logger.Info("registered simulated clusters", "count", len(s.clusters), "environment", s.opts.Environment)
	return nil
}

// Round makes every cluster report revision with its cluster type's targets. With lag,
// each cluster reports at a random point within it.
func (s *Simulator) Round(ctx context.Context, revision string, folders map[string][]string, lag time.Duration) error {
	type due struct {
		at time.Duration
		c  simCluster
	}
	s.revision = revision
	order := make([]due, len(s.clusters))
	for i, c := range s.clusters {
		order[i] = due{c: c}
		if lag > 0 {
			order[i].at = time.Duration(s.unit(c.name, "lag", revision) * float64(lag))
		}
	}
	slices.SortStableFunc(order, func(a, b due) int { return cmp.Compare(a.at, b.at) })
	start := time.Now()
	defer func() { s.reported = time.Since(start) }()
	work := make(chan simCluster)
	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Go(func() {
			for c := range work {
				s.send(ctx, c, revision, folders[c.clusterType])
			}
		})
	}
	defer func() { close(work); wg.Wait() }()
	for _, d := range order {
		if wait := d.at - time.Since(start); wait > 0 {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case work <- d.c:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// send posts one cluster's report; failures are counted and logged, never fatal.
func (s *Simulator) send(ctx context.Context, c simCluster, revision string, targets []string) {
	r := s.report(c, revision, targets)
	if err := s.hub.Report(ctx, c.token, r); err != nil {
		if s.stats.Errors.Add(1) <= 10 && !errors.Is(err, context.Canceled) {
			s.opts.Logger.Warn("report failed", "cluster", c.name, "err", err)
		}
		return
	}
	s.stats.Reports.Add(1)
}

// report is what cluster c reports at revision: every target Ready, or Failed with the
// failure probability (stable for the cluster, target and revision).
func (s *Simulator) report(c simCluster, revision string, targets []string) hub.Report {
	r := hub.Report{Cluster: c.name, Revision: revision, Status: hub.Compliant, ObservedAt: s.opts.Now().UTC(),
		Message: "simulated", Deployments: make([]hub.DeploymentReport, 0, len(targets))}
	for _, t := range targets {
		st := hub.Ready
		if s.opts.FailRate > 0 && s.unit(c.name, t, revision) < s.opts.FailRate {
			st, r.Status = hub.Failed, hub.NonCompliant
		}
		r.Deployments = append(r.Deployments, hub.DeploymentReport{DeploymentTarget: t, Status: st, Revision: revision})
	}
	return r
}

// unit returns a number in [0, 1) determined by the seed and the parts.
func (s *Simulator) unit(parts ...string) float64 {
	h := fnv.New64a()
	var seed [8]byte
	binary.LittleEndian.PutUint64(seed[:], s.opts.Seed)
	h.Write(seed[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(h.Sum64(), s.opts.Seed)).Float64() //nolint:gosec // the simulator's outcomes are reproducible from --seed; nothing secret depends on them
}

// Run reads the branch, registers the fleet, reports, and then follows the branch: a new
// revision is reported by every cluster within the lag, and unchanged state is re-sent at
// the heartbeat. With once, it returns after the first round.
func (s *Simulator) Run(ctx context.Context, once bool) error {
	commit, folders, err := s.source.Folders(ctx)
	if err != nil {
		return err
	}
	if commit == "" {
		return fmt.Errorf("environment %s: the GitOps branch does not exist yet (run fleetform apply first)", s.opts.Environment)
	}
	if err := s.Register(ctx, folders); err != nil {
		return err
	}
	if err := s.Round(ctx, commit, folders, s.opts.Lag); err != nil || once {
		return err
	}
	return s.follow(ctx, commit, folders)
}

func (s *Simulator) follow(ctx context.Context, commit string, folders map[string][]string) error {
	poll, beat := time.NewTicker(s.opts.Poll), time.NewTicker(s.opts.Heartbeat)
	defer poll.Stop()
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
			_ = s.Round(ctx, commit, folders, 0) // fails only when ctx ends, seen above next time
		case <-poll.C:
			next, nextFolders, err := s.source.Folders(ctx)
			if err != nil {
				s.opts.Logger.Warn("read the GitOps branch", "err", err)
				continue
			}
			if next == commit || next == "" {
				continue
			}
			if !sameTypes(folders, nextFolders) {
				if err := s.Register(ctx, nextFolders); err != nil {
					s.opts.Logger.Warn("register new cluster types", "err", err)
					continue
				}
			}
			commit, folders = next, nextFolders
			s.opts.Logger.Info("new revision", "revision", commit)
			_ = s.Round(ctx, commit, folders, s.opts.Lag) // fails only when ctx ends
		}
	}
}

func sameTypes(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}
