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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

const adminToken = "admin-secret"

// server is a hub on a real SQLite file behind the API, on an httptest server.
type server struct {
	t     testing.TB
	path  string
	store *sqlite.Store
	hub   *hub.Hub
	http  *httptest.Server
	stop  func()
}

func startServer(tb testing.TB, path string) *server {
	tb.Helper()
	return startServerWith(tb, path, api.Options{})
}

// startServerWith is startServer with the API's options (its Metrics are the hub's).
func startServerWith(tb testing.TB, path string, opts api.Options) *server {
	tb.Helper()
	t := tb
	ctx := context.Background()
	store, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	m := api.NewMetrics()
	h := hub.New(store, hub.Options{Observer: m})
	if _, err := h.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	stopHub := storetest.RunHub(t, h)
	opts.Metrics = m
	s := &server{t: t, path: path, store: store, hub: h, http: httptest.NewServer(api.New(h, opts))}
	stopped := false
	s.stop = func() {
		if stopped {
			return
		}
		stopped = true
		s.http.Close()
		stopHub()
		_ = store.Close()
	}
	t.Cleanup(s.stop)
	return s
}

func newServer(t *testing.T) *server {
	t.Helper()
	return startServer(t, filepath.Join(t.TempDir(), "hub.db"))
}

// call sends a request and returns the status and body.
func (s *server) call(method, path, token string, body any) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, s.http.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.http.Client().Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// must sends a request that must answer want, and decodes the body into out (if not nil).
func (s *server) must(want int, method, path, token string, body, out any) {
	s.t.Helper()
	got, data := s.call(method, path, token, body)
	if got != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, got, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v: %s", method, path, err, data)
		}
	}
}

// mustError checks an error answer: status, JSON {"error","code"} with a message.
func (s *server) mustError(want int, code, method, path, token string, body any) api.ErrorBody {
	s.t.Helper()
	got, data := s.call(method, path, token, body)
	var e api.ErrorBody
	if err := json.Unmarshal(data, &e); err != nil {
		s.t.Fatalf("%s %s: error body is not JSON: %v: %s", method, path, err, data)
	}
	if got != want || e.Code != code || e.Error == "" {
		s.t.Fatalf("%s %s: status %d code %q (%s), want %d %q with a message", method, path, got, e.Code, e.Error, want, code)
	}
	return e
}

func (s *server) register(name, env, clusterType string) string {
	s.t.Helper()
	var tok api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/clusters", adminToken,
		api.ClusterRegistration{Name: name, Environment: env, ClusterType: clusterType}, &tok)
	return tok.Token
}

func (s *server) readToken() string {
	s.t.Helper()
	var tok api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", adminToken, api.TokenRequest{Name: "dashboards"}, &tok)
	return tok.Token
}

func report(cluster, revision string, status hub.ClusterStatus, deps ...hub.DeploymentReport) hub.Report {
	return hub.Report{Cluster: cluster, Revision: revision, Status: status, ObservedAt: time.Now().UTC(), Deployments: deps}
}

func desired(env, revision string) hub.Desired {
	return hub.Desired{Environment: env, Revision: revision, GitOpsRepo: "https://example.com/gitops", Branch: env,
		PromotedCommit: "c0ffee", Assignments: []hub.DesiredAssignment{
			{Workload: "shop", DeploymentTarget: "shop-dev", ClusterType: "edge", Namespace: "shop",
				Manifests: map[string]string{"repo": "https://example.com/shop", "branch": "dev", "path": "."},
				Config:    map[string]any{"replicas": 2}},
			{Workload: "shop", DeploymentTarget: "shop-dev", ClusterType: "core", Namespace: "shop",
				Manifests: map[string]string{"repo": "https://example.com/shop", "branch": "dev", "path": "."}},
		}}
}

func TestRegisterClusters(t *testing.T) {
	s := newServer(t)
	var tok api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/clusters", adminToken,
		`{"name":"edge-1","environment":"dev","clusterType":"edge","labels":{"region":"west"}}`, &tok)
	if tok.Name != "edge-1" || !strings.HasPrefix(tok.Token, "ff_") {
		t.Fatalf("registration answered %+v", tok)
	}
	s.mustError(http.StatusConflict, "conflict", "POST", "/api/v1/clusters", adminToken,
		api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge"})

	var rotated api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/clusters?rotate=true", adminToken,
		api.ClusterRegistration{Name: "edge-1", Environment: "dev", ClusterType: "edge"}, &rotated)
	if rotated.Token == tok.Token {
		t.Fatal("rotation kept the token")
	}
	s.mustError(http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/reports", tok.Token, report("edge-1", "r1", hub.Compliant))
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", rotated.Token, report("edge-1", "r1", hub.Compliant), nil)

	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/clusters", adminToken,
		api.ClusterRegistration{Name: "Bad Name", Environment: "dev", ClusterType: "edge"})
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/clusters?rotate=maybe", adminToken,
		api.ClusterRegistration{Name: "edge-2", Environment: "dev", ClusterType: "edge"})
}

func TestTokenScoping(t *testing.T) {
	s := newServer(t)
	edge1 := s.register("edge-1", "dev", "edge")
	s.register("edge-2", "dev", "edge")
	read := s.readToken()
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)

	// Writes: without a token 401, an unknown token 401, a read or cluster token 403.
	for _, path := range []string{"/api/v1/clusters", "/api/v1/tokens", "/api/v1/desired", "/api/v1/versions", "/api/v1/approvals", "/api/v1/events"} {
		s.mustError(http.StatusUnauthorized, "unauthorized", "POST", path, "", `{}`)
		s.mustError(http.StatusUnauthorized, "unauthorized", "POST", path, "ff_nope", `{}`)
		s.mustError(http.StatusForbidden, "forbidden", "POST", path, read, `{}`)
		s.mustError(http.StatusForbidden, "forbidden", "POST", path, edge1, `{}`)
	}
	// Reports: only the cluster's own token.
	s.mustError(http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/reports", "", report("edge-1", "r1", hub.Compliant))
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports", edge1, report("edge-2", "r1", hub.Compliant))
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports", read, report("edge-1", "r1", hub.Compliant))
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports", adminToken, report("edge-1", "r1", hub.Compliant))
	// Reads: the admin or a read-only token; not anonymous, not a cluster's token.
	for _, path := range []string{"/api/v1/environments", "/api/v1/environments/dev/rollout", "/api/v1/environments/dev/source",
		"/api/v1/clusters/edge-1", "/api/v1/diff?from=dev&to=dev", "/api/v1/history", "/api/v1/drift?environment=dev",
		"/api/v1/approvals?environment=dev"} {
		s.must(http.StatusOK, "GET", path, read, nil, nil)
		s.must(http.StatusOK, "GET", path, adminToken, nil, nil)
		s.mustError(http.StatusUnauthorized, "unauthorized", "GET", path, "", nil)
		s.mustError(http.StatusForbidden, "forbidden", "GET", path, edge1, nil)
	}
	got, _ := s.call("GET", "/api/v1/environments", "", nil)
	if got != http.StatusUnauthorized {
		t.Fatalf("anonymous read: %d", got)
	}
}

func TestReportRejections(t *testing.T) {
	s := newServer(t)
	tok := s.register("edge-1", "dev", "edge")
	post := func(body string) api.ErrorBody {
		t.Helper()
		return s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports", tok, body)
	}
	ok := `{"cluster":"edge-1","revision":"r1","status":"Compliant","message":"","observedAt":"2026-11-01T12:00:00Z","deployments":[]}`
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tok, ok, nil)

	cases := map[string]string{
		"malformed":         `{"cluster":"edge-1",`,
		"not an object":     `["edge-1"]`,
		"empty":             ``,
		"trailing data":     ok + `{}`,
		"unknown field":     strings.Replace(ok, `"message"`, `"mesage"`, 1),
		"status":            strings.Replace(ok, `Compliant`, `Fine`, 1),
		"deployment status": strings.Replace(ok, `[]`, `[{"deploymentTarget":"a","namespace":"n","status":"Done","revision":"x"}]`, 1),
		"no revision":       strings.Replace(ok, `"r1"`, `""`, 1),
		"bad time":          strings.Replace(ok, `2026-11-01T12:00:00Z`, `yesterday`, 1),
		"wrong type":        strings.Replace(ok, `"deployments":[]`, `"deployments":3`, 1),
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) { post(body) })
	}
	t.Run("unknown field names it", func(t *testing.T) {
		if e := post(cases["unknown field"]); !strings.Contains(e.Error, "mesage") {
			t.Fatalf("message %q does not name the field", e.Error)
		}
	})
	t.Run("from the future", func(t *testing.T) {
		e := post(strings.Replace(ok, `2026-11-01T12:00:00Z`, `2099-01-01T00:00:00Z`, 1))
		for _, want := range []string{"observedAt 2099-01-01T00:00:00Z", "hub's clock", "skew of 5m0s"} {
			if !strings.Contains(e.Error, want) {
				t.Errorf("message %q does not say %q", e.Error, want)
			}
		}
	})
	t.Run("oversized", func(t *testing.T) {
		big := strings.Replace(ok, `"message":""`, `"message":"`+strings.Repeat("x", api.DefaultMaxBodyBytes)+`"`, 1)
		if e := post(big); !strings.Contains(e.Error, "larger than") {
			t.Fatalf("message %q", e.Error)
		}
	})
	t.Run("unregistered", func(t *testing.T) {
		// A token whose cluster was deleted cannot exist; a report for a cluster the token
		// does not belong to is forbidden before the store is asked.
		s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports", tok, strings.Replace(ok, "edge-1", "ghost", 1))
	})
}

func TestUnroutedAndHealth(t *testing.T) {
	s := newServer(t)
	s.mustError(http.StatusNotFound, "not_found", "GET", "/api/v1/nothing", adminToken, nil)
	e := s.mustError(http.StatusMethodNotAllowed, "method_not_allowed", "DELETE", "/api/v1/clusters", adminToken, nil)
	if !strings.Contains(e.Error, "DELETE") {
		t.Fatalf("405 message %q", e.Error)
	}
	s.mustError(http.StatusNotFound, "not_found", "GET", "/api/v1/clusters/ghost", adminToken, nil)
	s.mustError(http.StatusNotFound, "not_found", "GET", "/api/v1/environments/nowhere/rollout", adminToken, nil)
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/diff?from=dev", adminToken, nil)
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/history?since=later", adminToken, nil)
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/history?limit=-1", adminToken, nil)
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/drift", adminToken, nil)
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/approvals", adminToken, nil)

	var st map[string]string
	s.must(http.StatusOK, "GET", "/healthz", "", nil, &st)
	s.must(http.StatusOK, "GET", "/readyz", "", nil, &st)
	if st["status"] != "ready" {
		t.Fatalf("readyz: %v", st)
	}
	_ = s.store.Close()
	s.mustError(http.StatusServiceUnavailable, "unavailable", "GET", "/readyz", "", nil)
	s.must(http.StatusOK, "GET", "/healthz", "", nil, nil)
}

func TestDesiredAndRolloutShape(t *testing.T) {
	s := newServer(t)
	tokens := map[string]string{}
	for _, c := range []struct{ name, ct string }{{"edge-1", "edge"}, {"edge-2", "edge"}, {"edge-3", "edge"}, {"core-1", "core"}} {
		tokens[c.name] = s.register(c.name, "dev", c.ct)
	}
	var acc api.DesiredAccepted
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), &acc)
	if acc != (api.DesiredAccepted{Environment: "dev", Revision: "r1", Assignments: 2}) {
		t.Fatalf("desired answered %+v", acc)
	}
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil) // same again: idempotent
	other := desired("dev", "r1")
	other.Assignments = other.Assignments[:1]
	s.mustError(http.StatusConflict, "conflict", "POST", "/api/v1/desired", adminToken, other)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/desired", adminToken, `{"environment":"dev"}`)

	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tokens["edge-1"], report("edge-1", "r1", hub.Compliant,
		hub.DeploymentReport{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Ready, Revision: "v1"}), nil)
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tokens["edge-2"], report("edge-2", "r1", hub.Compliant,
		hub.DeploymentReport{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Failed, Revision: "v1"}), nil)
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tokens["core-1"], report("core-1", "r0", hub.Compliant), nil)

	_, data := s.call("GET", "/api/v1/environments/dev/rollout", adminToken, nil)
	var got any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	var want any
	_ = json.Unmarshal([]byte(`{"environment":"dev","revision":"r1","targets":[
		{"workload":"shop","deploymentTarget":"shop-dev","clusterType":"core","clusters":1,"compliant":0,"failed":0,"progressing":1,"unknown":0},
		{"workload":"shop","deploymentTarget":"shop-dev","clusterType":"edge","clusters":3,"compliant":1,"failed":1,"progressing":0,"unknown":1}]}`), &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("rollout (-want +got):\n%s", diff)
	}

	var envs api.EnvironmentList
	s.must(http.StatusOK, "GET", "/api/v1/environments", adminToken, nil, &envs)
	if !cmp.Equal(envs.Environments, []string{"dev"}) {
		t.Fatalf("environments: %v", envs)
	}
	var src hub.EnvironmentSource
	s.must(http.StatusOK, "GET", "/api/v1/environments/dev/source", adminToken, nil, &src)
	if src.PromotedCommit != "c0ffee" || src.PostedAt.IsZero() || src.Rollout.Revision != "r1" || len(src.Rollout.Targets) != 2 {
		t.Fatalf("source: %+v", src)
	}
	var keys map[string]json.RawMessage
	s.must(http.StatusOK, "GET", "/api/v1/environments/dev/source", adminToken, nil, &keys)
	assertKeys(t, keys, "rollout", "promotedCommit", "postedAt", "lastChange")
}

func TestClusterHistoryDiffDrift(t *testing.T) {
	s := newServer(t)
	edge := s.register("edge-1", "dev", "edge")
	s.register("edge-9", "dev", "edge") // never reports: silent
	prodTok := s.register("edge-p", "prod", "edge")
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	prod := desired("prod", "p1")
	prod.Assignments[0].Config = map[string]any{"replicas": 5}
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, prod, nil)
	var v hub.WorkloadVersion
	s.must(http.StatusCreated, "POST", "/api/v1/versions", adminToken, hub.WorkloadVersion{Environment: "dev", Workload: "shop",
		DeploymentTarget: "shop-dev", Version: "1.2.0", Build: "42", SourceCommit: "abc"}, &v)
	if v.Version != "1.2.0" {
		t.Fatalf("version answered %+v", v)
	}
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/versions", adminToken, `{"environment":"dev"}`)

	r := report("edge-1", "r1", hub.NonCompliant, hub.DeploymentReport{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Failed, Revision: "v1"})
	r.GitOpsPath = "./core"
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", edge, r, nil)
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", prodTok, report("edge-p", "p1", hub.Compliant), nil)

	var c hub.ClusterDetail
	s.must(http.StatusOK, "GET", "/api/v1/clusters/edge-1", adminToken, nil, &c)
	if c.Name != "edge-1" || c.Revision != "r1" || c.State != "NonCompliant" || len(c.Deployments) != 1 || len(c.RecentEvents) == 0 {
		t.Fatalf("cluster: %+v", c)
	}
	var ckeys map[string]json.RawMessage
	s.must(http.StatusOK, "GET", "/api/v1/clusters/edge-1", adminToken, nil, &ckeys)
	assertKeys(t, ckeys, "name", "environment", "clusterType", "labels", "registeredAt", "reported", "revision", "status",
		"message", "observedAt", "receivedAt", "gitopsPath", "fresh", "state", "deployments", "recentEvents")

	var hist api.HistoryList
	s.must(http.StatusOK, "GET", "/api/v1/history?environment=dev&workload=shop", adminToken, nil, &hist)
	if len(hist.Events) != 1 || hist.Events[0].Kind != hub.EventDeployment || hist.Events[0].To != "Failed" {
		t.Fatalf("history for the workload: %+v", hist.Events)
	}
	s.must(http.StatusOK, "GET", "/api/v1/history?environment=dev&since=1h", adminToken, nil, &hist)
	kinds := map[string]int{}
	for _, e := range hist.Events {
		kinds[e.Kind]++
	}
	if kinds[hub.EventDesired] != 1 || kinds[hub.EventRegistration] != 2 || kinds[hub.EventCluster] != 1 {
		t.Fatalf("history kinds %v", kinds)
	}
	s.must(http.StatusOK, "GET", "/api/v1/history?environment=dev&since=2000-01-01T00:00:00Z&limit=1", adminToken, nil, &hist)
	if len(hist.Events) != 1 {
		t.Fatalf("limit=1 gave %d events", len(hist.Events))
	}
	s.must(http.StatusOK, "GET", "/api/v1/history?clusterType=core", adminToken, nil, &hist)
	if len(hist.Events) != 0 {
		t.Fatalf("clusterType=core: %+v", hist.Events)
	}

	var d hub.EnvDiff
	s.must(http.StatusOK, "GET", "/api/v1/diff?from=dev&to=prod", adminToken, nil, &d)
	if d.From != "dev" || d.To != "prod" || len(d.Workloads) != 1 || d.Workloads[0].Same || len(d.Workloads[0].Config) != 1 ||
		d.Workloads[0].From.Versions["shop-dev"] != "1.2.0" {
		t.Fatalf("diff: %+v", d)
	}
	s.mustError(http.StatusNotFound, "not_found", "GET", "/api/v1/diff?from=dev&to=nowhere", adminToken, nil)

	var dr hub.Drift
	s.must(http.StatusOK, "GET", "/api/v1/drift?environment=dev", adminToken, nil, &dr)
	if dr.Revision != "r1" || len(dr.Silent) != 1 || dr.Silent[0].Name != "edge-9" || len(dr.Failing) != 1 ||
		len(dr.FailingClusters) != 1 || len(dr.WrongPath) != 1 || len(dr.Behind) != 0 {
		t.Fatalf("drift: %+v", dr)
	}
	s.mustError(http.StatusBadRequest, "invalid", "GET", "/api/v1/drift?environment=dev&behind=soon", adminToken, nil)
}

func TestApprovalsAndEvents(t *testing.T) {
	s := newServer(t)
	var a api.Approval
	s.must(http.StatusCreated, "POST", "/api/v1/approvals", adminToken, api.Approval{Environment: "prod", Commit: "abc", By: "ann"}, &a)
	if a.By != "ann" {
		t.Fatalf("approval answered %+v", a)
	}
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/approvals", adminToken, api.Approval{Environment: "prod", Commit: "abc"})
	var list api.ApprovalList
	s.must(http.StatusOK, "GET", "/api/v1/approvals?environment=prod", adminToken, nil, &list)
	if list.Environment != "prod" || len(list.Approvals) != 1 || list.Approvals[0].Revision != "abc" || list.Approvals[0].Message != "approved by ann" {
		t.Fatalf("approvals: %+v", list)
	}

	ev := hub.Event{Kind: hub.EventPromotion, Environment: "prod", Revision: "abc", Message: "refused: dev not compliant"}
	s.must(http.StatusCreated, "POST", "/api/v1/events", adminToken, ev, nil)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/events", adminToken, hub.Event{Kind: "cluster", Environment: "prod"})
	var hist api.HistoryList
	s.must(http.StatusOK, "GET", "/api/v1/history?environment=prod", adminToken, nil, &hist)
	if len(hist.Events) != 2 || hist.Events[0].Time.IsZero() {
		t.Fatalf("history: %+v", hist.Events)
	}
}

// TestAcceptedIsDurable: a 202 means the report is on disk: after the hub and its store are
// closed and the file reopened, it is there, and so is everything else.
func TestAcceptedIsDurable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.db")
	s := startServer(t, path)
	tok := s.register("edge-1", "dev", "edge")
	read := s.readToken()
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tok, report("edge-1", "r1", hub.Compliant,
		hub.DeploymentReport{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Ready, Revision: "v1"}), nil)
	s.stop()

	s = startServer(t, path)
	var c hub.ClusterDetail
	s.must(http.StatusOK, "GET", "/api/v1/clusters/edge-1", read, nil, &c) // the read token survived too
	if !c.Reported || c.Revision != "r1" || c.Status != hub.Compliant || len(c.Deployments) != 1 {
		t.Fatalf("after restart: %+v", c)
	}
	var ro hub.Rollout
	s.must(http.StatusOK, "GET", "/api/v1/environments/dev/rollout", read, nil, &ro)
	if ro.Revision != "r1" || len(ro.Targets) != 2 {
		t.Fatalf("rollout after restart: %+v", ro)
	}
	for _, tr := range ro.Targets {
		if tr.ClusterType == "edge" && (tr.Clusters != 1 || tr.Compliant != 1) {
			t.Fatalf("edge after restart: %+v", tr)
		}
	}
	// The cluster's token still works after the restart.
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tok, report("edge-1", "r1", hub.Compliant), nil)
}

func TestMetrics(t *testing.T) {
	s := newServer(t)
	tok := s.register("edge-1", "dev", "edge")
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	s.must(http.StatusAccepted, "POST", "/api/v1/reports", tok, report("edge-1", "r1", hub.Compliant), nil)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports", tok, `{`)
	got, data := s.call("GET", "/metrics", "", nil)
	if got != http.StatusOK {
		t.Fatalf("metrics: %d", got)
	}
	text := string(data)
	for _, want := range []string{
		`fleetform_hub_reports_total{result="accepted"} 1`,
		`fleetform_hub_reports_total{result="rejected"} 1`,
		`fleetform_hub_rollout_clusters{cluster_type="edge",deployment_target="shop-dev",environment="dev",state="compliant",workload="shop"} 1`,
		`fleetform_hub_rollout_clusters{cluster_type="core",deployment_target="shop-dev",environment="dev",state="unknown",workload="shop"} 0`,
		`fleetform_hub_ingest_commit_seconds_count{result="ok"}`,
		`fleetform_hub_http_request_duration_seconds_count{code="202",method="POST",route="/api/v1/reports"} 1`,
		`fleetform_hub_rollout_scrape_errors 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func assertKeys(t *testing.T, m map[string]json.RawMessage, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			t.Errorf("answer lacks %q: has %v", k, mapKeys(m))
		}
	}
}

func mapKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
