package serve

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetform/fleetform/internal/hub"
)

// Metrics are serve's Prometheus metrics (on the hub's registry, so /metrics has both). A
// nil *Metrics records nothing.
type Metrics struct {
	polls        *prometheus.CounterVec
	sourceFails  *prometheus.GaugeVec
	sourceSynced *prometheus.GaugeVec
	syncSeconds  *prometheus.HistogramVec
	commits      *prometheus.CounterVec
	pullRequests *prometheus.CounterVec
	failed       *prometheus.GaugeVec
	leading      prometheus.Gauge
}

// NewMetrics registers serve's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		polls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fleetform_serve_source_polls_total",
			Help: "Polls of the sources, by kind (control-plane, workload, base) and result (ok, error)."}, []string{"kind", "result"}),
		sourceFails: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fleetform_serve_source_failures",
			Help: "Consecutive failed polls of each source (it waits longer each time, up to ten intervals)."}, []string{"source", "kind"}),
		sourceSynced: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fleetform_serve_source_last_sync_timestamp_seconds",
			Help: "When an environment reading each source was last synced without error."}, []string{"source", "kind"}),
		syncSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "fleetform_serve_sync_duration_seconds",
			Help:    "Duration of the syncs (load, schedule, render what changed, apply), by environment and result.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}, []string{"environment", "result"}),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fleetform_serve_commits_total",
			Help: "Commits written to the GitOps repositories, by environment."}, []string{"environment"}),
		pullRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fleetform_serve_pull_requests_total",
			Help: "Pull requests opened, by environment."}, []string{"environment"}),
		failed: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "fleetform_serve_failed_assignments",
			Help: "Assignments that failed at the environment's last sync (they keep their previous files)."}, []string{"environment"}),
		leading: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fleetform_serve_leader",
			Help: "1 when this replica leads (polls, applies and promotes)."}),
	}
	reg.MustRegister(m.polls, m.sourceFails, m.sourceSynced, m.syncSeconds, m.commits, m.pullRequests, m.failed, m.leading)
	return m
}

func (m *Metrics) polled(kind string, err error) {
	if m == nil {
		return
	}
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.polls.WithLabelValues(kind, result).Inc()
}

func (m *Metrics) source(st hub.SourceState) {
	if m == nil {
		return
	}
	m.sourceFails.WithLabelValues(st.URL, st.Kind).Set(float64(st.Failures))
	if !st.LastSync.IsZero() {
		m.sourceSynced.WithLabelValues(st.URL, st.Kind).Set(float64(st.LastSync.Unix()))
	}
}

// forget drops the series of a source serve no longer reads.
func (m *Metrics) forget(url, kind string) {
	if m == nil {
		return
	}
	m.sourceFails.DeleteLabelValues(url, kind)
	m.sourceSynced.DeleteLabelValues(url, kind)
}

func (m *Metrics) synced(rec hub.SyncRecord) {
	if m == nil {
		return
	}
	result := "ok"
	if rec.Error != "" {
		result = "error"
	}
	m.syncSeconds.WithLabelValues(rec.Environment, result).Observe((time.Duration(rec.DurationMS) * time.Millisecond).Seconds())
	if rec.GitOpsCommit != "" {
		m.commits.WithLabelValues(rec.Environment).Inc()
	}
	if rec.PullRequest != "" {
		m.pullRequests.WithLabelValues(rec.Environment).Inc()
	}
	m.failed.WithLabelValues(rec.Environment).Set(float64(len(rec.Failed)))
}

func (m *Metrics) leader(on bool) {
	if m == nil {
		return
	}
	v := 0.0
	if on {
		v = 1
	}
	m.leading.Set(v)
}
