package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// mustPoster is NewHTTPPoster for a URL that must be valid.
func mustPoster(t *testing.T, url string, token TokenSource, hc *http.Client) *HTTPPoster {
	t.Helper()
	p, err := NewHTTPPoster(url, token, hc)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const testToken = "ffc_secret-token"

// contractHub speaks the hub's report contract (POST /api/v1/reports, cluster token):
// 202 for a valid report of the token's cluster, 401 without the token, 400 for unknown
// fields or a missing revision, 503 while unavailable. Like the hub, it keeps a report only
// when it is newer (by observedAt) than the one it has.
type contractHub struct {
	mu          sync.Mutex
	unavailable bool
	accepted    []hub.Report // every report that became the cluster's state
	ignored     int          // reports not newer than the state
}

func (h *contractHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/reports" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unavailable {
		http.Error(w, `{"error":"database is restarting"}`, http.StatusServiceUnavailable)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		http.Error(w, `{"error":"a valid token is required"}`, http.StatusUnauthorized)
		return
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	var rep hub.Report
	if err := dec.Decode(&rep); err != nil || rep.Revision == "" || rep.ObservedAt.IsZero() {
		http.Error(w, `{"error":"malformed report"}`, http.StatusBadRequest)
		return
	}
	if n := len(h.accepted); n > 0 && !rep.ObservedAt.After(h.accepted[n-1].ObservedAt) {
		h.ignored++
	} else {
		h.accepted = append(h.accepted, rep)
	}
	w.WriteHeader(http.StatusAccepted)
}

func (h *contractHub) setUnavailable(v bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unavailable = v
}

func (h *contractHub) state() ([]hub.Report, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hub.Report(nil), h.accepted...), h.ignored
}

func fixedToken(tok string) TokenSource { return func() (string, error) { return tok, nil } }

func TestHTTPPosterContract(t *testing.T) {
	h := &contractHub{}
	srv := httptest.NewServer(h)
	defer srv.Close()
	ctx := t.Context()
	rep := state("abc", time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		hub.DeploymentReport{DeploymentTarget: "t", Namespace: "ns", Status: hub.Ready, Revision: "def"})

	if err := mustPoster(t, srv.URL+"/", fixedToken(testToken), srv.Client()).Report(ctx, rep); err != nil {
		t.Fatalf("valid report: %v", err)
	}
	accepted, _ := h.state()
	if len(accepted) != 1 || accepted[0].Deployments[0].DeploymentTarget != "t" {
		t.Fatalf("hub holds %+v, want the report", accepted)
	}

	err := mustPoster(t, srv.URL, fixedToken("wrong"), srv.Client()).Report(ctx, rep)
	var se *client.Error
	if !errors.As(err, &se) || se.Status != http.StatusUnauthorized || se.Message != "a valid token is required" {
		t.Fatalf("wrong token: %v, want a 401 client.Error with the hub's reason", err)
	}

	h.setUnavailable(true)
	err = mustPoster(t, srv.URL, fixedToken(testToken), srv.Client()).Report(ctx, rep)
	if !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable {
		t.Fatalf("unavailable hub: %v, want a 503 client.Error", err)
	}

	err = mustPoster(t, srv.URL, func() (string, error) { return "", errors.New("no token file") }, nil).Report(ctx, rep)
	if err == nil {
		t.Fatal("unreadable token: no error")
	}
}

// restartableServer serves h on a fixed loopback address that can be closed and opened
// again: a hub that is stopped and restarted.
type restartableServer struct {
	addr string
	h    http.Handler
	srv  *http.Server
	done chan struct{}
}

func (s *restartableServer) start(t *testing.T) {
	t.Helper()
	addr := s.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln)
	}()
}

func (s *restartableServer) stop() {
	_ = s.srv.Close()
	<-s.done
}

// startSender runs a Sender on p with a fake clock, a 1 s backoff and no jitter until the
// test ends; it returns once the first heartbeat is armed.
func startSender(t *testing.T, p Poster) (*Sender, *fakeClock) {
	t.Helper()
	clock := newFakeClock()
	sender := NewSender(p, SenderOptions{
		Clock: clock, MinBackoff: time.Second, MaxBackoff: time.Second,
		Jitter: func(limit time.Duration) time.Duration { return limit },
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = sender.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	clock.waitTimer(t) // heartbeat
	return sender, clock
}

// missHub delivers r1 (observed at t0), stops the hub, and updates the state to r2 and then
// r3 while the hub is away: the sender must retry in 1 s and deliver r3 only.
func missHub(t *testing.T, sender *Sender, clock *fakeClock, t0 time.Time, stopHub func()) {
	t.Helper()
	sender.Update(state("r1", t0))
	clock.waitTimer(t) // delivered: heartbeat re-armed
	stopHub()
	sender.Update(state("r2", t0.Add(time.Second)))
	if d := clock.waitTimer(t); d != time.Second {
		t.Fatalf("after a refused connection, retry in %v, want 1s", d)
	}
	sender.Update(state("r3", t0.Add(2*time.Second)))
}

func TestSenderThroughHTTPSurvivesHubRestart(t *testing.T) {
	h := &contractHub{}
	srv := &restartableServer{h: h}
	srv.start(t)
	defer func() { srv.stop() }()

	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	sender, clock := startSender(t, mustPoster(t, "http://"+srv.addr, fixedToken(testToken), hc))
	t0 := clock.Now()
	missHub(t, sender, clock, t0, srv.stop)

	srv.start(t) // back, same address, but its database is not ready yet
	h.setUnavailable(true)
	clock.Advance(time.Second)
	if d := clock.waitTimer(t); d != time.Second {
		t.Fatalf("after a 503, retry in %v, want 1s", d)
	}
	h.setUnavailable(false)
	clock.Advance(time.Second)
	clock.waitTimer(t) // delivered: heartbeat re-armed

	accepted, ignored := h.state()
	var got []string
	for _, r := range accepted {
		got = append(got, r.Revision)
	}
	if len(got) != 2 || got[0] != "r1" || got[1] != "r3" || ignored != 0 {
		t.Fatalf("hub accepted %v (ignored %d), want r1 then r3: the newest state, nothing stale", got, ignored)
	}
	if !accepted[1].ObservedAt.Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("r3 observed at %v, want %v", accepted[1].ObservedAt, t0.Add(2*time.Second))
	}
}

func TestErrorWithoutJSONBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.Copy(w, bytes.NewBufferString("upstream down\n"))
	}))
	defer srv.Close()
	err := mustPoster(t, srv.URL, fixedToken(testToken), srv.Client()).Report(t.Context(), state("r", time.Now()))
	var se *client.Error
	if !errors.As(err, &se) || se.Status != http.StatusBadGateway || se.Message != "upstream down" {
		t.Fatalf("got %v, want a 502 client.Error with the body as message", err)
	}
}
