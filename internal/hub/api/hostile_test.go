package api_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"text/template"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/postgres"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
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
	files, err := filepath.Glob(filepath.Join(hostileDir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s: %v", hostileDir, err)
	}
	for _, file := range files {
		c := readHostileCase(t, file)
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

// hostileCase is one file of the corpus.
type hostileCase struct {
	request  string // a template: METHOD PATH, header lines, a blank line, the body
	status   int
	code     string
	contains []string
}

func readHostileCase(t *testing.T, file string) hostileCase {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c hostileCase
	for _, f := range ar.Files {
		switch f.Name {
		case "request":
			c.request = string(f.Data)
		case "want":
			if err := c.parseWant(string(f.Data)); err != nil {
				t.Fatalf("%s: want: %v", file, err)
			}
		default:
			t.Fatalf("%s: unknown section %q (want request and want)", file, f.Name)
		}
	}
	if c.request == "" || c.status == 0 {
		t.Fatalf("%s: a case needs a request and a status", file)
	}
	return c
}

// parseWant reads "status: N", "code: C" and any number of "contains: TEXT" lines.
func (c *hostileCase) parseWant(s string) error {
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		key, value, ok := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok:
			return fmt.Errorf("line %q: want KEY: VALUE", line)
		case key == "status":
			n, err := strconv.Atoi(value)
			if err != nil {
				return err
			}
			c.status = n
		case key == "code":
			c.code = value
		case key == "contains":
			c.contains = append(c.contains, value)
		default:
			return fmt.Errorf("unknown key %q", key)
		}
	}
	return nil
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

// run sends the case's request and checks the answer.
func (f *hostileFixture) run(t *testing.T, c hostileCase) {
	t.Helper()
	req := f.request(t, c.request)
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	shown := body
	if len(shown) > 500 {
		shown = append(shown[:500:500], "…"...)
	}
	if resp.StatusCode != c.status {
		t.Fatalf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, resp.StatusCode, c.status, shown)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" || !json.Valid(body) {
		t.Errorf("the answer is not JSON (Content-Type %q): %s", ct, shown)
	}
	if c.code != "" {
		var e api.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil || e.Code != c.code || e.Error == "" {
			t.Errorf("error %+v (%v), want code %q with a message", e, err, c.code)
		}
	}
	for _, want := range c.contains {
		if !strings.Contains(string(body), want) {
			t.Errorf("the answer does not contain %q: %s", want, shown)
		}
	}
	for name, secret := range f.tokens {
		if strings.Contains(string(body), secret) {
			t.Errorf("the answer shows the %s token: %s", name, shown)
		}
	}
}

// request builds the case's request: its text is a template with the fixture's tokens
// ({{admin}}, {{read}}, {{revoked}}, {{expired}}, {{cluster}}, {{session}}), their IDs
// ({{id "admin"}})
// and {{repeat "x" N}}.
func (f *hostileFixture) request(t *testing.T, text string) *http.Request {
	t.Helper()
	funcs := template.FuncMap{"repeat": strings.Repeat, "id": func(name string) string { return f.ids[name] }}
	for name, secret := range f.tokens {
		funcs[name] = func() string { return secret }
	}
	tmpl, err := template.New("request").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, nil); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&buf)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("request line: %v", err)
	}
	method, target, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok {
		t.Fatalf("request line %q: want METHOD PATH", line)
	}
	headers := http.Header{}
	for {
		h, err := r.ReadString('\n')
		if strings.TrimSpace(h) == "" || err != nil {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	body, _ := io.ReadAll(r)
	body = bytes.TrimSuffix(body, []byte("\n"))
	req, err := http.NewRequestWithContext(context.Background(), method, f.url+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = headers
	return req
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
