package cli_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runningHub is `fleetform hub serve` running in this process.
type runningHub struct {
	url    string
	stderr *syncBuffer
	stop   func() int
}

var servingRE = regexp.MustCompile(`serving (https?://\S+)`)

// serveHub starts `fleetform hub serve --db db [flags]` on a free port and waits until it
// listens (db: a postgres:// DSN, or a file path for SQLite).
func serveHub(t *testing.T, db string, flags ...string) *runningHub {
	t.Helper()
	if !strings.HasPrefix(db, "postgres://") {
		db = "sqlite:" + db
	}
	return startServing(t, append([]string{"hub", "serve", "--addr", "127.0.0.1:0", "--db", db}, flags...)...)
}

// startServing runs a command that serves until stopped (hub serve, hub relay) and waits
// until it prints the URL it serves.
func startServing(t *testing.T, args ...string) *runningHub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	h := &runningHub{stderr: &syncBuffer{}}
	code := make(chan int, 1)
	go func() {
		code <- cli.Main(ctx, args, nil, &bytes.Buffer{}, h.stderr)
	}()
	stopped := false
	h.stop = func() int {
		if stopped {
			return 0
		}
		stopped = true
		cancel()
		return <-code
	}
	t.Cleanup(func() { h.stop() })
	deadline := time.Now().Add(30 * time.Second)
	for h.url == "" {
		select {
		case c := <-code:
			t.Fatalf("%s exited %d:\n%s", args[:2], c, h.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := servingRE.FindStringSubmatch(h.stderr.String()); m != nil {
			h.url = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not start:\n%s", args[:2], h.stderr.String())
		}
	}
	return h
}

// fleetform runs a command and returns its stdout; the exit code must be want.
func fleetform(t *testing.T, want int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main(context.Background(), args, nil, &stdout, &stderr); code != want {
		t.Fatalf("fleetform %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !regexp.MustCompile(w).MatchString(got) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// TestHubCommands runs the hub, registers a cluster, applies Kalypso's dev environment with
// --hub, reports, and reads status, diff, history and drift as text and JSON; then restarts
// the hub on the same database and finds the same state.
func TestHubCommands(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	db := t.TempDir() + "/hub.db"
	h := serveHub(t, db)

	// Usage errors come before any request.
	fleetform(t, cli.ExitUsage, "status", "--env", "dev")
	fleetform(t, cli.ExitUsage, "hub", "register", "--hub", h.url, "large-1", "--env", "dev", "--cluster-type", "large", "--label", "nokey")

	token := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", h.url, "large-1", "--env", "dev", "--cluster-type", "large", "--label", "region=west"))
	if !strings.HasPrefix(token, "ff_") || strings.Contains(token, "\n") {
		t.Fatalf("register printed %q, want the token alone", token)
	}
	fleetform(t, cli.ExitFailed, "hub", "register", "--hub", h.url, "large-1", "--env", "dev", "--cluster-type", "large")
	var rotated api.IssuedToken
	if err := json.Unmarshal([]byte(fleetform(t, 0, "hub", "register", "--hub", h.url, "large-1", "--env", "dev",
		"--cluster-type", "large", "--rotate", "-o", "json")), &rotated); err != nil || rotated.Name != "large-1" || rotated.Token == token {
		t.Fatalf("rotate: %+v %v", rotated, err)
	}
	fleetform(t, 0, "hub", "register", "--hub", h.url, "small-1", "--env", "dev", "--cluster-type", "small") // never reports
	readToken := strings.TrimSpace(fleetform(t, 0, "hub", "token", "create", "--hub", h.url, "ci"))

	// apply --hub posts what it scheduled at the commit it wrote.
	k := gittest.NewKalypso(t)
	gitops := gittest.NewBare(t)
	out := fleetform(t, 0, "apply", "--control-plane", k.ControlPlane.Dir, "--env", "dev", "--repo-map", gittest.SvcSrcURL+"="+k.SvcSrc.Dir,
		"--gitops", gitops.Dir, "--hub", h.url, "-o", "json")
	var applied struct{ Commit, Branch string }
	if err := json.Unmarshal([]byte(out), &applied); err != nil || applied.Commit == "" {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	reader, err := client.New(h.url, readToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := reader.Source(context.Background(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	if src.Rollout.Revision != applied.Commit || src.PromotedCommit != k.Main.String() || len(src.Rollout.Targets) != 1 {
		t.Fatalf("the hub has %+v; apply wrote %s from %s", src, applied.Commit, k.Main)
	}
	// A second apply changes nothing and posts the same desired state again (idempotent).
	fleetform(t, 0, "apply", "--control-plane", k.ControlPlane.Dir, "--env", "dev", "--repo-map", gittest.SvcSrcURL+"="+k.SvcSrc.Dir,
		"--gitops", gitops.Dir, "--hub", h.url)

	cluster, err := client.New(h.url, rotated.Token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.Report(context.Background(), hub.Report{Cluster: "large-1", Revision: applied.Commit, Status: hub.Compliant,
		ObservedAt: time.Now(), GitOpsPath: "./small", Deployments: []hub.DeploymentReport{
			{DeploymentTarget: "observability-prometheus", Namespace: "dev-large-observability-prometheus", Status: hub.Failed, Revision: "v1"}}}); err != nil {
		t.Fatal(err)
	}

	t.Setenv("FLEETFORM_HUB_TOKEN", readToken)
	status := fleetform(t, 0, "status", "--hub", h.url, "--env", "dev")
	mustContain(t, "status", status, `^dev at revision `+applied.Commit[:12]+`\n`,
		`WORKLOAD +DEPLOYMENT TARGET +CLUSTER TYPE +CLUSTERS +COMPLIANT +FAILED +PROGRESSING +UNKNOWN`,
		`observability +observability-prometheus +large +1 +0 +1 +0 +0`)
	var ro hub.Rollout
	if err := json.Unmarshal([]byte(fleetform(t, 0, "status", "--hub", h.url, "--env", "dev", "-o", "json")), &ro); err != nil ||
		len(ro.Targets) != 1 || ro.Targets[0].Failed != 1 {
		t.Fatalf("status -o json: %+v %v", ro, err)
	}
	// An unknown workload is an error, not an empty table.
	fleetform(t, cli.ExitFailed, "status", "--hub", h.url, "--env", "dev", "--workload", "other", "-o", "json")
	fleetform(t, cli.ExitFailed, "status", "--hub", h.url, "--workload", "other")
	fleetform(t, cli.ExitFailed, "status", "--hub", h.url, "--env", "nowhere")
	// Every environment: per workload, the clusters it should reach and those it has.
	mustContain(t, "status of every environment", fleetform(t, 0, "status", "--hub", h.url),
		`WORKLOAD +ENVIRONMENT +SHOULD REACH +HAS +FAILED +PROGRESSING +UNKNOWN`,
		`observability +dev +1 +0 +1 +0 +0`)
	var reach struct{ Workloads []hub.WorkloadReach }
	if err := json.Unmarshal([]byte(fleetform(t, 0, "status", "--hub", h.url, "--workload", "observability", "-o", "json")), &reach); err != nil ||
		len(reach.Workloads) != 1 || reach.Workloads[0].ShouldReach != 1 || reach.Workloads[0].Failed != 1 {
		t.Fatalf("status -o json of every environment: %+v %v", reach, err)
	}

	mustContain(t, "diff", fleetform(t, 0, "diff", "--hub", h.url, "dev", "dev"), `observability +yes +large +large`)
	var d hub.EnvDiff
	if err := json.Unmarshal([]byte(fleetform(t, 0, "diff", "--hub", h.url, "dev", "dev", "-o", "json")), &d); err != nil ||
		len(d.Workloads) != 1 || !d.Workloads[0].Same {
		t.Fatalf("diff -o json: %+v %v", d, err)
	}

	mustContain(t, "history", fleetform(t, 0, "history", "--hub", h.url, "--env", "dev", "--since", "1h"),
		`TIME +KIND +ENVIRONMENT +WHERE +REVISION +CHANGE +MESSAGE`,
		`deployment +dev +large-1/observability-prometheus +v1 +- -> Failed`,
		`cluster +dev +large-1 +`+applied.Commit[:12]+` +- -> Compliant@`+applied.Commit,
		`desired +dev +- +`+applied.Commit[:12]+` +- +1 assignment\(s\) scheduled`,
		`Per revision:`, `deployment +v1 +1 +.* +1 -> Failed`)
	mustContain(t, "history cut by --limit", fleetform(t, 0, "history", "--hub", h.url, "--env", "dev", "--limit", "1"),
		`Only the latest 1 events: --limit cut older ones`)
	var cut api.HistoryList
	if err := json.Unmarshal([]byte(fleetform(t, 0, "history", "--hub", h.url, "--env", "dev", "--limit", "1", "-o", "json")), &cut); err != nil ||
		len(cut.Events) != 1 || !cut.Truncated || len(cut.Summary) != 1 {
		t.Fatalf("history --limit 1 -o json: %+v %v", cut, err)
	}
	fleetform(t, cli.ExitFailed, "history", "--hub", h.url, "--workload", "nothing-by-this-name")
	var hist api.HistoryList
	if err := json.Unmarshal([]byte(fleetform(t, 0, "history", "--hub", h.url, "--workload", "observability", "-o", "json")), &hist); err != nil ||
		len(hist.Events) != 1 || hist.Events[0].To != "Failed" {
		t.Fatalf("history -o json: %+v %v", hist, err)
	}
	fleetform(t, cli.ExitUsage, "history", "--hub", h.url, "--since", "yesterday")

	mustContain(t, "drift", fleetform(t, 0, "drift", "--hub", h.url, "--env", "dev"),
		`dev at revision `+applied.Commit[:12]+`: 0 behind, 1 failing deployment\(s\), 0 failing cluster\(s\), 1 silent, 1 on a wrong path`,
		`failing deployment +large-1 +large +observability-prometheus Failed since`,
		`silent +small-1 +small +never reported`,
		`wrong path +large-1 +large +reconciles ./small`)
	var dr hub.Drift
	if err := json.Unmarshal([]byte(fleetform(t, 0, "drift", "--hub", h.url, "--env", "dev", "-o", "json")), &dr); err != nil ||
		len(dr.Silent) != 1 || len(dr.WrongPath) != 1 {
		t.Fatalf("drift -o json: %+v %v", dr, err)
	}

	// A read-only token cannot approve; the admin token can.
	fleetform(t, cli.ExitUsage, "approve", "--hub", h.url, "--env", "prod", "--commit", k.Main.String()[:7], "--by", "ann") // an approval is for one exact commit
	fleetform(t, cli.ExitFailed, "approve", "--hub", h.url, "--env", "prod", "--commit", k.Main.String(), "--by", "ann")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	mustContain(t, "approve", fleetform(t, 0, "approve", "--hub", h.url, "--env", "prod", "--commit", k.Main.String(), "--by", "ann"),
		`^approved `+k.Main.String()[:12]+` for prod by ann\n$`)

	// A stop drains and exits 0; a restart on the same database has everything.
	if code := h.stop(); code != 0 {
		t.Fatalf("hub serve exited %d:\n%s", code, h.stderr.String())
	}
	h = serveHub(t, db)
	mustContain(t, "status after restart", fleetform(t, 0, "status", "--hub", h.url, "--env", "dev"),
		`observability +observability-prometheus +large +1 +0 +1 +0 +0`)
	reader, err = client.New(h.url, readToken, nil) // the read token survived the restart too
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := reader.Approved(context.Background(), "prod", k.Main.String()); err != nil || !ok {
		t.Fatalf("approval after restart: %v %v", ok, err)
	}
}

func TestHubServeUsage(t *testing.T) {
	fleetform(t, cli.ExitUsage, "hub", "serve", "--addr", "127.0.0.1:0")
	fleetform(t, cli.ExitUsage, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "mysql://x")
	fleetform(t, cli.ExitUsage, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:x.db", "--tls-cert", "c.pem")
	fleetform(t, cli.ExitUsage, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:x.db", "--max-clock-skew", "0s")
	fleetform(t, cli.ExitUsage, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:x.db", "--token-cache-ttl", "-1s")
	fleetform(t, cli.ExitFailed, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "postgres://postgres@127.0.0.1:1/unreachable?connect_timeout=2")
}

// TestHubServeMaxClockSkew: hub serve rejects a report dated further ahead of its clock than
// --max-clock-skew, and takes one within it.
func TestHubServeMaxClockSkew(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, t.TempDir()+"/hub.db", "--max-clock-skew", "1m")
	token := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", h.url, "edge-1", "--env", "dev", "--cluster-type", "edge"))
	c, err := client.New(h.url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Report(context.Background(), hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now().Add(10 * time.Minute)})
	var he *client.Error
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Code != hub.CodeInvalid || !strings.Contains(he.Message, "skew of 1m0s") {
		t.Fatalf("a report 10 minutes ahead: %v, want 400 invalid naming the 1m skew", err)
	}
	if err := c.Report(context.Background(), hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant,
		ObservedAt: time.Now().Add(30 * time.Second)}); err != nil {
		t.Fatalf("a report 30 seconds ahead: %v", err)
	}
}

// TestHubServePostgres serves the hub on PostgreSQL, registers a cluster, reports and reads
// the cluster back; a restart on the same database keeps it.
func TestHubServePostgres(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	dsn := pgtest.NewDatabase(t)
	h := serveHub(t, dsn)
	token := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", h.url, "pg-1", "--env", "dev", "--cluster-type", "large"))
	c, err := client.New(h.url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Report(context.Background(), hub.Report{Cluster: "pg-1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if code := h.stop(); code != 0 {
		t.Fatalf("hub serve exited %d:\n%s", code, h.stderr.String())
	}
	h = serveHub(t, dsn)
	mustContain(t, "hub cluster after a restart", fleetform(t, 0, "history", "--hub", h.url, "--env", "dev", "--kind", "cluster"), `pg-1`)
}

// TestHubServeTokenCacheTTL: two replicas on one PostgreSQL database. A cluster token
// replaced through one replica stops working on a replica serving with --token-cache-ttl 0
// at once, and keeps working for the TTL on one that looked it up before with a long TTL.
func TestHubServeTokenCacheTTL(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	dsn := pgtest.NewDatabase(t)
	admin := serveHub(t, dsn)
	uncached, cached := serveHub(t, dsn, "--token-cache-ttl", "0"), serveHub(t, dsn, "--token-cache-ttl", "1h")
	old := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", admin.url, "edge-1", "--env", "dev", "--cluster-type", "edge"))
	report := func(url string, n int) error {
		c, err := client.New(url, old, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Report(context.Background(), hub.Report{Cluster: "edge-1", Revision: fmt.Sprintf("r%d", n), Status: hub.Compliant, ObservedAt: time.Now()})
	}
	for _, h := range []*runningHub{uncached, cached} {
		if err := report(h.url, 1); err != nil {
			t.Fatalf("a report with the cluster's token: %v", err)
		}
	}
	fleetform(t, 0, "hub", "register", "--hub", admin.url, "edge-1", "--env", "dev", "--cluster-type", "edge", "--rotate") // a new token
	var he *client.Error
	if err := report(uncached.url, 2); !errors.As(err, &he) || he.Status != http.StatusUnauthorized {
		t.Errorf("the replaced token on the replica without a cache: %v, want 401", err)
	}
	if err := report(cached.url, 2); err != nil {
		t.Errorf("the replaced token on the replica that cached it for 1h: %v, want accepted until the TTL ends", err)
	}
}

// TestHubLoadtest runs a small load test against a hub: every acknowledged report counted.
func TestHubLoadtest(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, t.TempDir()+"/hub.db")
	var doc struct {
		Reports int64 `json:"reports"`
		Errors  int64 `json:"errors"`
		Counted bool  `json:"counted"`
		Steady  *struct {
			Reports   int64   `json:"reports"`
			PerSecond float64 `json:"reportsPerSecond"`
		} `json:"steady"`
	}
	// 2 s: far more than 20 first reports take, even under the race detector on a busy machine.
	out := fleetformDev(t, 0, "loadtest", "--hub", h.url, "--clusters", "20", "--concurrency", "3", "--duration", "2s",
		"--change-every", "1", "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Reports == 0 || doc.Errors != 0 || !doc.Counted {
		t.Fatalf("loadtest: %+v %v\n%s", doc, err, out)
	}
	// 20 clusters over 3 workers: every cluster reported once well within the run.
	if st := doc.Steady; st == nil || st.Reports <= 0 || st.Reports > doc.Reports || st.PerSecond <= 0 {
		t.Fatalf("loadtest: steady state %+v of %d reports\n%s", st, doc.Reports, out)
	}
	// Again on the same clusters: their tokens are rotated, a new desired revision posted.
	fleetformDev(t, 0, "loadtest", "--hub", h.url, "--clusters", "20", "--concurrency", "3", "--duration", "200ms")

	// Heartbeats only, on new clusters: after its first report (the new revision, all Ready)
	// no cluster's state changes, so no deployment is progressing (a cluster yet to report
	// is unknown), and the rollout still counts every cluster's last report.
	var hb struct {
		Reports int64 `json:"reports"`
		Errors  int64 `json:"errors"`
		Counted bool  `json:"counted"`
	}
	out = fleetformDev(t, 0, "loadtest", "--hub", h.url, "--env", "heartbeats", "--clusters", "20", "--concurrency", "3",
		"--duration", "300ms", "--change-every", "0", "-o", "json")
	if err := json.Unmarshal([]byte(out), &hb); err != nil || hb.Reports == 0 || hb.Errors != 0 || !hb.Counted {
		t.Fatalf("loadtest --change-every 0: %+v %v\n%s", hb, err, out)
	}
	admin, err := client.New(h.url, "admin-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	ro, err := admin.Rollout(context.Background(), "heartbeats")
	if err != nil || len(ro.Targets) != 3 {
		t.Fatalf("rollout %+v: %v", ro, err)
	}
	for _, tr := range ro.Targets {
		if tr.Compliant == 0 || tr.Progressing != 0 {
			t.Fatalf("heartbeats only, yet %+v", tr)
		}
	}
	// --wrk: the clusters registered and the desired state posted, a wrk script holds every
	// cluster with a token the hub takes and the revision it expects; nothing is reported.
	script := filepath.Join(t.TempDir(), "reports.lua")
	fleetformDev(t, 0, "loadtest", "--hub", h.url, "--env", "wrk", "--clusters", "5", "--wrk", script)
	lua, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	entries := regexp.MustCompile(`\{"(wrk-\d+)", "([^"]+)"\}`).FindAllStringSubmatch(string(lua), -1)
	revision := regexp.MustCompile(`local revision, targets, prefix = "([^"]+)", 3, "loadtest-target-"`).FindStringSubmatch(string(lua))
	if len(entries) != 5 || revision == nil || !strings.Contains(string(lua), "function request()") {
		t.Fatalf("the wrk script:\n%s", lua)
	}
	wrkAdmin, err := client.New(h.url, "admin-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ro, err := wrkAdmin.Rollout(context.Background(), "wrk"); err != nil || ro.Revision != revision[1] {
		t.Fatalf("rollout of the wrk clusters %+v (%v), want revision %s", ro, err, revision[1])
	}
	rep := hub.Report{Cluster: entries[0][1], Revision: revision[1], Status: hub.Compliant, ObservedAt: time.Now()}
	if err := wrkAdmin.WithToken(entries[0][2]).Report(context.Background(), rep); err != nil {
		t.Errorf("a report with the script's token for %s: %v", entries[0][1], err)
	}
	fleetformDev(t, 2, "loadtest", "--hub", h.url, "--change-every", "-1")

	// In batches, with a relay token: 20 clusters over 2 workers, 4 reports per request
	// (a worker's 10 clusters wrap around within a batch), every state change counted.
	var batched struct {
		Reports int64 `json:"reports"`
		Errors  int64 `json:"errors"`
		Counted bool  `json:"counted"`
		Batch   int   `json:"batch"`
	}
	out = fleetformDev(t, 0, "loadtest", "--hub", h.url, "--env", "batches", "--clusters", "20", "--concurrency", "2",
		"--batch", "4", "--duration", "500ms", "--change-every", "1", "-o", "json")
	if err := json.Unmarshal([]byte(out), &batched); err != nil || batched.Reports < 20 || batched.Errors != 0 || !batched.Counted || batched.Batch != 4 {
		t.Fatalf("loadtest --batch 4: %+v %v\n%s", batched, err, out)
	}
	fleetformDev(t, 2, "loadtest", "--hub", h.url, "--batch", "0")
}

// TestHubServeTLS serves HTTPS with --tls-cert and --tls-key; the generated admin token is
// printed once, and not again on the next start.
func TestHubServeTLS(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "")
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	h := serveHub(t, dir+"/hub.db", "--tls-cert", certFile, "--tls-key", keyFile)
	if !strings.HasPrefix(h.url, "https://") {
		t.Fatalf("serving %s", h.url)
	}
	m := regexp.MustCompile(`shown once[^\n]*\n(ff_\S+)\n`).FindStringSubmatch(h.stderr.String())
	if m == nil {
		t.Fatalf("no generated admin token on stderr:\n%s", h.stderr.String())
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	c, err := client.New(h.url, m[1], hc)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateReadToken(context.Background(), "ci"); err != nil {
		t.Fatalf("the generated token is not the admin token: %v", err)
	}
	h.stop()
	h = serveHub(t, dir+"/hub.db", "--tls-cert", certFile, "--tls-key", keyFile)
	if strings.Contains(h.stderr.String(), "shown once") {
		t.Fatalf("a second start generated another admin token:\n%s", h.stderr.String())
	}
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns a pool trusting it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hub"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

// TestPromoteThroughHub: promote reads its gates from a hub over HTTP and records its
// refusal there (the control plane of testdata/script/promote.txtar: stage takes dev's
// promotions after 100% compliance for 30m).
func TestPromoteThroughHub(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	ar, err := txtar.ParseFile(filepath.Join("testdata", "script", "promote.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	t.Chdir(work) // dev's GitOpsRepo is the relative path gitops.git
	files := map[string]string{}
	for _, f := range ar.Files {
		if name, ok := strings.CutPrefix(f.Name, "src/"); ok {
			files[name] = string(f.Data)
		}
	}
	cp, err := gittest.InitRepo(filepath.Join(work, "cp.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	cp.Commit(t, "main", files)
	if _, err := gittest.InitRepo(filepath.Join(work, "gitops.git"), true); err != nil {
		t.Fatal(err)
	}
	h := serveHub(t, filepath.Join(work, "hub.db"))

	fleetform(t, 0, "promote", "--control-plane", "cp.git", "--to", "dev", "--hub", h.url)
	fleetform(t, 0, "apply", "--control-plane", "cp.git", "--env", "dev", "--hub", h.url)
	out := fleetform(t, cli.ExitRefused, "promote", "--control-plane", "cp.git", "--to", "stage", "--hub", h.url, "-o", "json")
	// No cluster reports: the reason says so once, not also how long dev was "compliant".
	mustContain(t, "promote", out, `"promoted": false`,
		`dev: no cluster reports any deployment target at revision [0-9a-f]{7}, 100% required; the 30m0s soak starts once it is compliant`)
	if strings.Contains(out, "unchanged and compliant for") {
		t.Fatalf("the refusal contradicts itself:\n%s", out)
	}
	if strings.Contains(out, "no desired state") {
		t.Fatalf("the hub's desired state was not read:\n%s", out)
	}
	mustContain(t, "history", fleetform(t, 0, "history", "--hub", h.url, "--kind", "promotion"),
		`promotion +stage +- +[0-9a-f]{12} +dev -> stage +refused: `,
		`promotion +dev +- +[0-9a-f]{12} +- -> dev +promoted [0-9a-f]{7} to dev`)
}
