package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// TestServeStateEndpoints: GET /api/v1/sources and GET /api/v1/environments/{env}/sync answer
// what fleetform serve recorded, to the admin and read-only tokens only, and the sync of an
// environment without one is a 404.
func TestServeStateEndpoints(t *testing.T) {
	s := newServer(t)
	read := s.readToken()
	edge := s.register("edge-1", "dev", "edge")
	var empty map[string]json.RawMessage
	s.must(http.StatusOK, "GET", "/api/v1/sources", read, nil, &empty)
	if string(empty["sources"]) != "[]" {
		t.Fatalf("sources before any: %s; want []", empty["sources"])
	}
	s.mustError(http.StatusNotFound, "not_found", "GET", "/api/v1/environments/dev/sync", read, nil)

	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	sources := []hub.SourceState{
		{URL: "https://example.com/org/control-plane", Branch: "main", Kind: hub.SourceKindControlPlane, LastCommit: "c0ffee",
			LastPoll: at, LastSync: at, NextPoll: at.Add(time.Minute)},
		{URL: "https://example.com/org/shop", Kind: hub.SourceKindWorkload, LastPoll: at, LastError: "connection refused", Failures: 2},
	}
	for _, src := range sources {
		if err := s.hub.PutSource(context.Background(), src); err != nil {
			t.Fatal(err)
		}
	}
	sync := hub.SyncRecord{Environment: "dev", Time: at, DurationMS: 812, ControlPlaneCommit: "c0ffee", GitOpsRepo: "https://example.com/org/gitops",
		Branch: "dev", GitOpsCommit: "86d88a9", FilesChanged: 3, Trigger: hub.TriggerPoll,
		Failed: []hub.FailedAssignment{{ClusterType: "edge", DeploymentTarget: "shop-dev", Error: "template: no value for replicas"}}}
	if err := s.hub.RecordSync(context.Background(), sync); err != nil {
		t.Fatal(err)
	}

	var list api.SourceList
	s.must(http.StatusOK, "GET", "/api/v1/sources", read, nil, &list)
	if diff := cmp.Diff(sources, list.Sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	var got hub.SyncRecord
	s.must(http.StatusOK, "GET", "/api/v1/environments/dev/sync", read, nil, &got)
	if diff := cmp.Diff(sync, got); diff != "" {
		t.Errorf("latest sync (-want +got):\n%s", diff)
	}
	checkServeStateJSON(t, s, read)

	for _, path := range []string{"/api/v1/sources", "/api/v1/environments/dev/sync"} {
		s.must(http.StatusOK, "GET", path, adminToken, nil, nil)
		s.mustError(http.StatusUnauthorized, "unauthorized", "GET", path, "", nil)
		s.mustError(http.StatusForbidden, "forbidden", "GET", path, edge, nil)
		s.mustError(http.StatusMethodNotAllowed, "method_not_allowed", "POST", path, adminToken, `{}`)
	}
}

// checkServeStateJSON checks the answers' field names: times and texts left unset are left
// out, the failed list is always there.
func checkServeStateJSON(t *testing.T, s *server, token string) {
	t.Helper()
	var list struct {
		Sources []map[string]json.RawMessage `json:"sources"`
	}
	s.must(http.StatusOK, "GET", "/api/v1/sources", token, nil, &list)
	if len(list.Sources) != 2 {
		t.Fatalf("sources: %v", list.Sources)
	}
	assertKeys(t, list.Sources[0], "url", "branch", "kind", "lastCommit", "lastPoll", "lastSync", "failures", "nextPoll")
	assertKeys(t, list.Sources[1], "url", "branch", "kind", "lastPoll", "lastError", "failures")
	for _, absent := range []string{"lastCommit", "lastSync", "nextPoll"} {
		if _, ok := list.Sources[1][absent]; ok {
			t.Errorf("a source without %s has it in its answer: %s", absent, list.Sources[1][absent])
		}
	}
	var sync map[string]json.RawMessage
	s.must(http.StatusOK, "GET", "/api/v1/environments/dev/sync", token, nil, &sync)
	assertKeys(t, sync, "environment", "time", "durationMs", "controlPlaneCommit", "gitopsRepo", "branch", "gitopsCommit",
		"noChange", "filesChanged", "failed", "trigger")
}
