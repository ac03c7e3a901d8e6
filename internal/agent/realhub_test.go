package agent

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
)

// realHub is the hub's HTTP API over a SQLite file, served on a fixed loopback address, that
// can be stopped (server, ingest and store) and started again on the same file and address.
type realHub struct {
	path string
	srv  *restartableServer
	h    *hub.Hub
	stop func()
}

func (r *realHub) start(t *testing.T) {
	t.Helper()
	store, err := sqlite.Open(context.Background(), r.path)
	if err != nil {
		t.Fatal(err)
	}
	r.h = hub.New(store, hub.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.h.Run(ctx) }()
	if r.srv == nil {
		r.srv = &restartableServer{}
	}
	r.srv.h = api.New(r.h, api.Options{})
	r.srv.start(t)
	r.stop = func() { r.srv.stop(); cancel(); <-done; _ = store.Close() }
}

// TestSenderSurvivesRealHubRestart: a real hub goes away and comes back on the same
// database while the cluster's state changes twice; the hub ends with the newest state, and
// its history never saw the intermediate one.
func TestSenderSurvivesRealHubRestart(t *testing.T) {
	r := &realHub{path: filepath.Join(t.TempDir(), "hub.db")}
	r.start(t)
	defer func() { r.stop() }()
	token, err := r.h.RegisterCluster(t.Context(), hub.Cluster{Name: "c1", Environment: "dev", ClusterType: "edge"}, false)
	if err != nil {
		t.Fatal(err)
	}

	sender, clock := startSender(t, mustPoster(t, "http://"+r.srv.addr, fixedToken(token), nil))
	missHub(t, sender, clock, time.Now().UTC().Truncate(time.Millisecond), r.stop)
	r.start(t) // back on the same database and address
	clock.Advance(time.Second)
	clock.waitTimer(t) // delivered: heartbeat re-armed

	detail, err := r.h.Cluster(t.Context(), "c1")
	if err != nil {
		t.Fatal(err)
	}
	if detail.Revision != "r3" {
		t.Fatalf("the hub holds revision %q after the restart, want r3", detail.Revision)
	}
	var revisions []string
	for _, e := range detail.RecentEvents {
		if e.Kind == hub.EventCluster {
			revisions = append(revisions, e.Revision)
		}
	}
	slices.Reverse(revisions) // the events come newest first
	if !slices.Equal(revisions, []string{"r1", "r3"}) {
		t.Fatalf("cluster transitions %v, want r1 then r3: the newest state, nothing stale or lost", revisions)
	}
}
