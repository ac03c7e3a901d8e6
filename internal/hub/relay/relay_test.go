package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

const adminToken = "admin-secret"

// site is a real hub (SQLite, the API over HTTP) and a relay in front of it, forwarding
// through the hub's client with a relay token.
type site struct {
	t     *testing.T
	hub   *hub.Hub
	admin *client.Client
	relay *Relay
	url   string // the relay's
	calls *recorder
}

// recorder is the hub's client, recording every batch's size and body size; until open is
// closed, every call waits on it.
type recorder struct {
	to      Forwarder
	open    chan struct{}
	entered chan struct{} // one value per call, as it starts
	mu      sync.Mutex
	batches []int
	bytes   []int
	fail    error
	once    sync.Once
}

// release lets every call through.
func (r *recorder) release() { r.once.Do(func() { close(r.open) }) }

func (r *recorder) ReportBatch(ctx context.Context, reports []api.SignedReport) ([]api.ReportResult, error) {
	r.entered <- struct{}{}
	<-r.open
	body, err := json.Marshal(api.ReportBatch{Reports: reports})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.batches, r.bytes = append(r.batches, len(reports)), append(r.bytes, len(body))
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return r.to.ReportBatch(ctx, reports)
}

func newSite(t *testing.T, opts Options) *site {
	t.Helper()
	ctx := context.Background()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	h := hub.New(store, hub.Options{})
	if _, err := h.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	storetest.RunHub(t, h)
	hubSrv := httptest.NewServer(api.New(h, api.Options{}))
	t.Cleanup(func() { hubSrv.Close(); _ = store.Close() })
	admin, err := client.New(hubSrv.URL, adminToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := admin.CreateToken(ctx, api.TokenRequest{Name: "plant-7", Kind: hub.TokenRelay})
	if err != nil {
		t.Fatal(err)
	}
	calls := &recorder{to: admin.WithToken(tok.Token), open: make(chan struct{}), entered: make(chan struct{}, 1000)}
	rl := New(calls, opts)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rl.Run(runCtx) }()
	relaySrv := httptest.NewServer(rl)
	t.Cleanup(func() { calls.release(); relaySrv.Close(); stop(); <-done })
	return &site{t: t, hub: h, admin: admin, relay: rl, url: relaySrv.URL, calls: calls}
}

// agent registers a cluster and returns a client posting to the relay with its token.
func (s *site) agent(name string) *client.Client {
	s.t.Helper()
	tok, err := s.admin.RegisterCluster(context.Background(), api.ClusterRegistration{Name: name, Environment: "dev", ClusterType: "edge"}, false)
	if err != nil {
		s.t.Fatal(err)
	}
	c, err := client.New(s.url, tok.Token, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// waitQueued waits until n reports are queued (the sender is held by the recorder).
func (s *site) waitQueued(n int) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.relay.queue) < n {
		if time.Now().After(deadline) {
			s.t.Fatalf("%d reports queued, want %d", len(s.relay.queue), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func report(cluster string, status hub.ClusterStatus) hub.Report {
	return hub.Report{Cluster: cluster, Revision: "r1", Status: status, ObservedAt: time.Now().UTC()}
}

func TestReportsGoInBatchesAndEachAgentHearsItsOwn(t *testing.T) {
	s := newSite(t, Options{Senders: 1})
	agents := map[string]*client.Client{}
	for i := range 11 {
		name := fmt.Sprintf("edge-%d", i)
		agents[name] = s.agent(name)
	}
	// The first report holds the only sender; the other ten queue behind it.
	errs := make(chan error, len(agents)+1)
	go func() { errs <- agents["edge-0"].Report(context.Background(), report("edge-0", hub.Compliant)) }()
	<-s.calls.entered
	for i := 1; i < 11; i++ {
		name := fmt.Sprintf("edge-%d", i)
		go func() { errs <- agents[name].Report(context.Background(), report(name, hub.NonCompliant)) }()
	}
	// One agent with another cluster's token: the hub refuses that report alone.
	go func() { errs <- agents["edge-1"].Report(context.Background(), report("edge-2", hub.Compliant)) }()
	s.waitQueued(11)
	s.calls.release()

	var forbidden int
	for range 12 {
		err := <-errs
		switch {
		case err == nil:
		case hub.ErrorCode(err) == hub.CodeForbidden && strings.Contains(err.Error(), `"edge-1", not "edge-2"`):
			forbidden++
		default:
			t.Errorf("report: %v", err)
		}
	}
	if forbidden != 1 {
		t.Fatalf("%d reports refused as forbidden, want 1", forbidden)
	}
	if got := s.calls.batches; len(got) != 2 || got[0] != 1 || got[1] != 11 {
		t.Fatalf("batches %v, want [1 11]", got)
	}
	for i := range 11 {
		name := fmt.Sprintf("edge-%d", i)
		c, err := s.hub.Cluster(context.Background(), name)
		want := map[bool]hub.ClusterStatus{true: hub.Compliant, false: hub.NonCompliant}[i == 0]
		if err != nil || c.Status != want {
			t.Errorf("%s: %q, %v; want %q", name, c.Status, err, want)
		}
	}
}

func TestBatchesStayWithinTheHubsLimits(t *testing.T) {
	// About three reports of this size fit in 1,000 bytes.
	s := newSite(t, Options{Senders: 1, MaxBatch: 4, MaxBatchBytes: 1000})
	errs := make(chan error, 11)
	first := s.agent("edge-first")
	go func() { errs <- first.Report(context.Background(), report("edge-first", hub.Compliant)) }()
	<-s.calls.entered
	for i := range 10 {
		name := fmt.Sprintf("edge-%d", i)
		c := s.agent(name)
		r := report(name, hub.Compliant)
		r.Message = strings.Repeat("m", 100)
		go func() { errs <- c.Report(context.Background(), r) }()
	}
	s.waitQueued(4) // the queue holds MaxBatch reports per sender; the others wait to be queued
	s.calls.release()
	for range 11 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for i, n := range s.calls.batches {
		total += n
		if n > 4 || s.calls.bytes[i] > 1000 {
			t.Errorf("batch %d: %d reports, %d bytes; want at most 4 and 1,000", i, n, s.calls.bytes[i])
		}
	}
	if total != 11 || len(s.calls.batches) < 5 {
		t.Fatalf("batches %v of %v bytes: want 11 reports in at least 5 batches", s.calls.batches, s.calls.bytes)
	}
}

func TestAnUndeliveredBatchIsABadGateway(t *testing.T) {
	s := newSite(t, Options{})
	c := s.agent("edge-1")
	s.calls.fail = errors.New("dial tcp 10.0.0.1:8080: connection refused")
	s.calls.release()
	err := c.Report(context.Background(), report("edge-1", hub.Compliant))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusBadGateway || ce.Code != "unavailable" || !strings.Contains(ce.Message, "connection refused") {
		t.Fatalf("report through a relay that cannot reach the hub: %v", err)
	}
	if c, err := s.hub.Cluster(context.Background(), "edge-1"); err != nil || c.Reported {
		t.Fatalf("the hub has %+v, %v", c, err)
	}
}

func TestWhatTheRelayRefusesItself(t *testing.T) {
	s := newSite(t, Options{})
	s.calls.release()
	call := func(method, path, token, body string) (int, api.ErrorBody) {
		t.Helper()
		req, err := http.NewRequestWithContext(context.Background(), method, s.url+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var e api.ErrorBody
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e
	}
	if st, e := call("POST", "/api/v1/reports", "", `{}`); st != http.StatusUnauthorized || e.Code != "unauthorized" {
		t.Errorf("no token: %d %+v", st, e)
	}
	if st, e := call("POST", "/api/v1/reports", "ff_x", `{"cluster":"a","mesage":""}`); st != http.StatusBadRequest || !strings.Contains(e.Error, "mesage") {
		t.Errorf("unknown field: %d %+v", st, e)
	}
	if st, e := call("POST", "/api/v1/reports", "ff_x", `{"cluster":"a","message":"`+strings.Repeat("x", api.DefaultMaxBodyBytes)+`"}`); st != http.StatusBadRequest || !strings.Contains(e.Error, "larger than") {
		t.Errorf("oversized: %d %+v", st, e)
	}
	if st, e := call("GET", "/api/v1/environments", "ff_x", ``); st != http.StatusNotFound || !strings.Contains(e.Error, "only POST /api/v1/reports") {
		t.Errorf("another endpoint: %d %+v", st, e)
	}
	if st, _ := call("GET", "/healthz", "", ``); st != http.StatusOK {
		t.Errorf("healthz: %d", st)
	}
	if st, e := call("POST", "/api/v1/reports", "ff_unknown", `{"cluster":"a","revision":"r","status":"Compliant","observedAt":"2026-11-01T00:00:00Z"}`); st != http.StatusUnauthorized || e.Code != "unauthorized" {
		t.Errorf("unknown token, through the hub: %d %+v", st, e)
	}
	if len(s.calls.batches) != 1 {
		t.Fatalf("batches %v: only the report with a token and a well-formed body goes to the hub", s.calls.batches)
	}
}

// oddHub answers every report with a result no hub gives.
type oddHub struct{}

func (oddHub) ReportBatch(_ context.Context, reports []api.SignedReport) ([]api.ReportResult, error) {
	return make([]api.ReportResult, len(reports)), nil
}

func TestAResultNoHubGivesIsABadGateway(t *testing.T) {
	rl := New(oddHub{}, Options{})
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rl.Run(ctx) }()
	srv := httptest.NewServer(rl)
	t.Cleanup(func() { srv.Close(); stop(); <-done })
	c, err := client.New(srv.URL, "ff_token", nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.Report(context.Background(), report("edge-1", hub.Compliant))
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusBadGateway || !strings.Contains(ce.Message, "status 0") {
		t.Fatalf("report: %v", err)
	}
}
