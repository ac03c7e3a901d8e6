package api

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/fleetform/fleetform/internal/hub"
)

// Metrics are the hub's Prometheus metrics, on their own registry. It implements
// hub.Observer: pass it as the hub's Observer to count ingest results and commits.
type Metrics struct {
	registry *prometheus.Registry
	reports  *prometheus.CounterVec
	commits  *prometheus.HistogramVec
	batch    prometheus.Histogram
	requests *prometheus.HistogramVec

	once sync.Once
}

var _ hub.Observer = (*Metrics)(nil)

// NewMetrics returns the metrics with a new registry (with the Go and process collectors).
func NewMetrics() *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		reports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleetform_hub_reports_total",
			Help: "Cluster reports by result: accepted, unchanged (only the times), ignored (older than the hub's), rejected.",
		}, []string{"result"}),
		commits: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fleetform_hub_ingest_commit_seconds",
			Help:    "Duration of the ingest transactions (one commits a group of reports), by result.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"result"}),
		batch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "fleetform_hub_ingest_batch_reports",
			Help:    "Reports committed per ingest transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
		requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "fleetform_hub_http_request_duration_seconds",
			Help:    "Duration of HTTP requests by method, route and status code.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14),
		}, []string{"method", "route", "code"}),
	}
	for _, r := range []string{hub.ResultAccepted, hub.ResultUnchanged, hub.ResultIgnored, hub.ResultRejected} {
		m.reports.WithLabelValues(r)
	}
	m.registry.MustRegister(m.reports, m.commits, m.batch, m.requests,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the metrics are on (to add more, or to gather in tests).
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Reported implements hub.Observer.
func (m *Metrics) Reported(result string) { m.reports.WithLabelValues(result).Inc() }

// Committed implements hub.Observer.
func (m *Metrics) Committed(reports int, took time.Duration, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.commits.WithLabelValues(result).Observe(took.Seconds())
	m.batch.Observe(float64(reports))
}

func (m *Metrics) observeRequest(method, route string, status int, took time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Observe(took.Seconds())
}

// watchRollouts registers the rollout gauges of h (once per Metrics).
func (m *Metrics) watchRollouts(h *hub.Hub) {
	m.once.Do(func() { m.registry.MustRegister(&rolloutCollector{hub: h}) })
}

// rolloutCollector reads every environment's rollout at scrape time (the rollout is a few
// counter rows per environment, whatever the number of clusters).
type rolloutCollector struct{ hub *hub.Hub }

var (
	rolloutDesc = prometheus.NewDesc("fleetform_hub_rollout_clusters",
		"Clusters per state for each deployment target of the environment's latest desired revision.",
		[]string{"environment", "cluster_type", "deployment_target", "workload", "state"}, nil)
	rolloutErrorDesc = prometheus.NewDesc("fleetform_hub_rollout_scrape_errors",
		"1 when the rollouts could not be read at this scrape.", nil, nil)
)

// scrapeTimeout bounds reading the rollouts at a scrape.
const scrapeTimeout = 10 * time.Second

// Describe implements prometheus.Collector.
func (c *rolloutCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- rolloutDesc
	ch <- rolloutErrorDesc
}

// Collect implements prometheus.Collector.
func (c *rolloutCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	failed := 0.0
	envs, err := c.hub.Environments(ctx)
	if err != nil {
		failed = 1
	}
	for _, env := range envs {
		ro, err := c.hub.Rollout(ctx, env)
		if hub.ErrorCode(err) == hub.CodeNotFound {
			continue // no desired state yet
		}
		if err != nil {
			failed = 1
			continue
		}
		for _, t := range ro.Targets {
			for state, n := range map[hub.State]int{hub.StateCompliant: t.Compliant, hub.StateFailed: t.Failed,
				hub.StateProgressing: t.Progressing, hub.StateUnknown: t.Unknown} {
				ch <- prometheus.MustNewConstMetric(rolloutDesc, prometheus.GaugeValue, float64(n),
					env, t.ClusterType, t.DeploymentTarget, t.Workload, string(state))
			}
		}
	}
	ch <- prometheus.MustNewConstMetric(rolloutErrorDesc, prometheus.GaugeValue, failed)
}
