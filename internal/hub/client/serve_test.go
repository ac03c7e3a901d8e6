package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// TestServeState reads what fleetform serve recorded through the client: sources, and the
// latest sync of an environment (hub.ErrNotFound before there is one).
func TestServeState(t *testing.T) {
	ctx := context.Background()
	h := storetest.RunningHub(t, hub.Options{})
	if _, err := h.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(h, api.Options{}))
	t.Cleanup(srv.Close)
	admin := newClient(t, srv.URL, adminToken)
	read, err := admin.CreateReadToken(ctx, "status")
	if err != nil {
		t.Fatal(err)
	}
	reader := newClient(t, srv.URL, read.Token)

	if got, err := reader.Sources(ctx); err != nil || len(got) != 0 {
		t.Fatalf("sources before any: %+v, %v", got, err)
	}
	if _, err := reader.LatestSync(ctx, "dev"); !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("latest sync before any: %v; want hub.ErrNotFound", err)
	}
	src := hub.SourceState{URL: "https://example.com/org/control-plane", Kind: hub.SourceKindControlPlane, LastCommit: "c0ffee",
		LastPoll: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)}
	if err := h.PutSource(ctx, src); err != nil {
		t.Fatal(err)
	}
	sync := hub.SyncRecord{Environment: "dev", Time: src.LastPoll, NoChange: true, Trigger: hub.TriggerStart, Failed: []hub.FailedAssignment{}}
	if err := h.RecordSync(ctx, sync); err != nil {
		t.Fatal(err)
	}
	sources, err := reader.Sources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]hub.SourceState{src}, sources); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	got, err := reader.LatestSync(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sync, got); diff != "" {
		t.Errorf("latest sync (-want +got):\n%s", diff)
	}
}
