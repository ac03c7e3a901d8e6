package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/hostilehttp"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// hostileDir holds the hub's hostile-input corpus, at the repository's root.
var hostileDir = filepath.Join("..", "..", "..", "testdata", "hostile", "hub")

// TestHostileInputs runs the corpus of testdata/hostile/hub: each file is one request and
// the answer it must get (see its README), sent to a fresh hub on SQLite and on PostgreSQL.
// Every answer is JSON and shows no secret; after each request the hub still serves its
// fixture unchanged (no table dropped, no token revoked).
func TestHostileInputs(t *testing.T) {
	for _, file := range hostilehttp.Files(t, hostileDir) {
		c := hostilehttp.Read(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			for name, open := range hostileStores {
				t.Run(name, func(t *testing.T) {
					f := newHostileFixture(t, open(t))
					f.run(t, c)
					f.check(t)
				})
			}
		})
	}
}

// hostileStores open a fresh store for one case.
var hostileStores = map[string]func(t *testing.T) hub.Store{
	"sqlite": func(t *testing.T) hub.Store {
		t.Helper()
		s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "hub.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	},
	"postgres": func(t *testing.T) hub.Store {
		t.Helper()
		s, err := postgres.Open(context.Background(), pgtest.NewDatabase(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	},
}

// hostileFixture is a hub with an admin token, two registered clusters (edge-1 has
// reported), a desired state, and read-only tokens: one valid, one revoked, one expired.
type hostileFixture struct {
	url     string
	client  *http.Client
	tokens  map[string]string // admin, read, revoked, expired, cluster (edge-1's)
	ids     map[string]string // their IDs
	listing []hub.TokenInfo   // GET /api/v1/tokens before the case
}

// fixedClock is the fixture's clock, moved forward by hand.
type fixedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fixedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fixedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newHostileFixture(t *testing.T, store hub.Store) *hostileFixture {
	t.Helper()
	ctx := context.Background()
	clock := &fixedClock{now: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	h := hub.New(store, hub.Options{Now: clock.Now, SweepEvery: -1})
	storetest.RunHub(t, h)
	srv := httptest.NewServer(api.New(h, api.Options{}))
	t.Cleanup(srv.Close)
	f := &hostileFixture{url: srv.URL, client: srv.Client(), tokens: map[string]string{"admin": adminToken}, ids: map[string]string{}}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.Bootstrap(ctx, adminToken)
	must(err)
	for _, name := range []string{"edge-1", "edge-2"} {
		tok, err := h.RegisterCluster(ctx, hub.Cluster{Name: name, Environment: "dev", ClusterType: "edge"}, false)
		must(err)
		if name == "edge-1" {
			f.tokens["cluster"] = tok
		}
	}
	must(h.PostDesired(ctx, desired("dev", "r1")))
	must(h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: "edge-1"},
		hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant, ObservedAt: clock.Now()}))
	for _, name := range []string{"read", "revoked", "expired"} {
		var expires time.Time
		if name == "expired" {
			expires = clock.Now().Add(time.Hour)
		}
		_, secret, err := h.CreateToken(ctx, hub.TokenRead, name, expires)
		must(err)
		f.tokens[name] = secret
	}
	// A web UI session of the admin token.
	session, err := h.CreateSession(ctx, hub.SessionOf{TokenID: hub.TokenID(hub.HashToken(f.tokens["admin"]))}, "admin (admin)", clock.Now().Add(12*time.Hour))
	must(err)
	f.tokens["session"] = session
	for name, secret := range f.tokens {
		f.ids[name] = hub.TokenID(hub.HashToken(secret))
	}
	_, err = h.RevokeToken(ctx, f.ids["revoked"])
	must(err)
	clock.advance(2 * time.Hour)
	f.listing = f.tokenListing(t)
	return f
}

// run sends the case's request and checks the answer: JSON, as the case wants, with no
// token of the fixture.
func (f *hostileFixture) run(t *testing.T, c hostilehttp.Case) {
	t.Helper()
	funcs := template.FuncMap{"repeat": strings.Repeat, "id": func(name string) string { return f.ids[name] }}
	for name, secret := range f.tokens {
		funcs[name] = func() string { return secret }
	}
	req := c.NewRequest(t, f.url, funcs) // {{admin}}, {{read}}, {{revoked}}, {{expired}}, {{cluster}}, {{session}}, {{id "admin"}}, {{repeat "x" N}}
	body := c.Do(t, f.client, req, f.tokens)
	if !json.Valid(body) {
		t.Errorf("the answer is not JSON: %.500s", body)
	}
}

// check asks the hub for its fixture after the case: the clusters, the history and every
// token as they were.
func (f *hostileFixture) check(t *testing.T) {
	t.Helper()
	for _, path := range []string{"/api/v1/clusters/edge-1", "/api/v1/clusters/edge-2", "/api/v1/history?cluster=edge-1",
		"/api/v1/environments/dev/rollout"} {
		if status, body := f.get(t, path, f.tokens["read"]); status != http.StatusOK || !strings.Contains(body, "edge") {
			t.Errorf("after the case, GET %s: %d %s", path, status, body)
		}
	}
	if got := f.tokenListing(t); !equalJSON(got, f.listing) {
		t.Errorf("after the case, the tokens are\n%+v\nwant\n%+v", got, f.listing)
	}
}

func (f *hostileFixture) tokenListing(t *testing.T) []hub.TokenInfo {
	t.Helper()
	status, body := f.get(t, "/api/v1/tokens", f.tokens["admin"])
	var list api.TokenList
	if err := json.Unmarshal([]byte(body), &list); err != nil || status != http.StatusOK {
		t.Fatalf("GET /api/v1/tokens: %d %s", status, body)
	}
	return list.Tokens
}

func (f *hostileFixture) get(t *testing.T, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func equalJSON(a, b any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}
