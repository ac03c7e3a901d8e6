package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
)

// testBatchReads: the reads ingest makes for a whole batch at once (LockClusters,
// ClusterEnvironments, PrefetchDeployments) return what one-at-a-time reads return, leave
// unregistered names out, and a cluster written later in the transaction is read back as
// written, not as locked.
func (s suite) testBatchReads(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	web := hub.DeploymentState{DeploymentTarget: "web", Namespace: "shop", Status: hub.Ready, Revision: "v1", Since: at}
	err := store.Update(ctx, func(tx hub.Tx) error {
		for _, c := range []hub.Cluster{{Name: "a", Environment: "dev", ClusterType: "x"}, {Name: "b", Environment: "prod", ClusterType: "x"}} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: c, Reported: true, Revision: "r1", Status: hub.Compliant}); err != nil {
				return err
			}
		}
		return tx.SetDeployments(ctx, "a", []hub.DeploymentState{web}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	err = store.Update(ctx, func(tx hub.Tx) error {
		envs, err := tx.ClusterEnvironments(ctx, []string{"a", "b", "ghost"})
		if err != nil {
			return err
		}
		if diff := cmp.Diff(map[string]string{"a": "dev", "b": "prod"}, envs); diff != "" {
			t.Errorf("ClusterEnvironments (-want +got):\n%s", diff)
		}
		checkLockClusters(ctx, t, tx, web)
		checkWritesAfterLocks(ctx, t, tx, at)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkLockClusters locks a, b and an unregistered name and reads a's deployments ahead.
func checkLockClusters(ctx context.Context, t *testing.T, tx hub.Tx, web hub.DeploymentState) {
	t.Helper()
	locked, err := tx.LockClusters(ctx, []string{"a", "b", "ghost"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range locked {
		names = append(names, c.Name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" || locked[0].Revision != "r1" || locked[1].Environment != "prod" {
		t.Errorf("LockClusters returned %+v; names (-want +got):\n%s", locked, diff)
	}
	if err := tx.PrefetchDeployments(ctx, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	if deps, err := tx.Deployments(ctx, "a"); err != nil || len(deps) != 1 || deps[0] != web {
		t.Errorf("a's deployments after PrefetchDeployments: %+v, %v; want [%+v]", deps, err, web)
	}
	if deps, err := tx.Deployments(ctx, "b"); err != nil || len(deps) != 0 {
		t.Errorf("b's deployments after PrefetchDeployments: %+v, %v; want none", deps, err)
	}
}

// checkWritesAfterLocks touches a and updates b after they were locked: LockCluster returns
// them as written.
func checkWritesAfterLocks(ctx context.Context, t *testing.T, tx hub.Tx, at time.Time) {
	t.Helper()
	if err := tx.TouchCluster(ctx, "a", at, at.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if a, err := tx.LockCluster(ctx, "a"); err != nil || !a.ObservedAt.Equal(at) || !a.ReceivedAt.Equal(at.Add(time.Second)) {
		t.Errorf("a after TouchCluster: %+v, %v; want observed at %s", a, err, at)
	}
	b, err := tx.LockCluster(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	b.Status, b.Revision = hub.NonCompliant, "r2"
	if err := tx.UpdateCluster(ctx, b); err != nil {
		t.Fatal(err)
	}
	if b, err := tx.LockCluster(ctx, "b"); err != nil || b.Status != hub.NonCompliant || b.Revision != "r2" {
		t.Errorf("b after UpdateCluster: %+v, %v; want NonCompliant at r2", b, err)
	}
	if locked, err := tx.LockClusters(ctx, []string{"a", "b"}); err != nil || len(locked) != 2 || locked[1].Revision != "r2" {
		t.Errorf("LockClusters after the writes: %+v, %v; want b at r2", locked, err)
	}
}

// testTouches: heartbeat times (TouchCluster) of several clusters in one transaction are
// committed, read back within it by every read, and never overwrite a full update of the
// same cluster that came after them; the latest touch of a cluster wins.
func (s suite) testTouches(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	err := store.Update(ctx, func(tx hub.Tx) error {
		for _, name := range []string{"a", "b", "c"} {
			c := hub.Cluster{Name: name, Environment: "dev", ClusterType: "x"}
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: c, Reported: true, Fresh: true, Revision: "r1", Status: hub.Compliant, ObservedAt: at}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	later := at.Add(time.Minute)
	err = store.Update(ctx, func(tx hub.Tx) error {
		for _, touch := range []struct {
			name string
			at   time.Time
		}{{"a", at.Add(time.Second)}, {"b", later}, {"c", later}, {"a", later}} {
			if err := tx.TouchCluster(ctx, touch.name, touch.at, touch.at.Add(time.Second)); err != nil {
				return err
			}
		}
		c, err := tx.LockCluster(ctx, "c")
		if err != nil {
			return err
		}
		c.Status, c.ObservedAt, c.ReceivedAt = hub.NonCompliant, later.Add(time.Hour), later.Add(time.Hour)
		if err := tx.UpdateCluster(ctx, c); err != nil {
			return err
		}
		checkClusterTimes(ctx, t, tx, "within the transaction", map[string]time.Time{"a": later, "b": later, "c": later.Add(time.Hour)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// A transaction of touches alone: they are written at its commit.
	last := later.Add(time.Minute)
	if err := store.Update(ctx, func(tx hub.Tx) error { return tx.TouchCluster(ctx, "b", last, last) }); err != nil {
		t.Fatal(err)
	}
	err = store.View(ctx, func(r hub.Reader) error {
		checkClusterTimes(ctx, t, r, "after the commits", map[string]time.Time{"a": later, "b": last, "c": later.Add(time.Hour)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// checkClusterTimes checks each named cluster's observedAt as Clusters reads it.
func checkClusterTimes(ctx context.Context, t *testing.T, r hub.Reader, when string, want map[string]time.Time) {
	t.Helper()
	cs, err := r.Clusters(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]time.Time{}
	for _, c := range cs {
		got[c.Name] = c.ObservedAt.UTC()
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observedAt %s (-want +got):\n%s", when, diff)
	}
}

// testEnvironments: the environments are those of the clusters and of the desired states,
// each once, sorted.
func (s suite) testEnvironments(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	list := func() []string {
		t.Helper()
		var out []string
		if err := store.View(ctx, func(r hub.Reader) (err error) { out, err = r.Environments(ctx); return err }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := list(); len(got) != 0 {
		t.Errorf("an empty store lists %q", got)
	}
	err := store.Update(ctx, func(tx hub.Tx) error {
		for i, env := range []string{"stage", "dev", "prod", "dev", "stage", "dev", "a-env"} {
			c := hub.Cluster{Name: fmt.Sprintf("c%d", i), Environment: env, ClusterType: "x"}
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: c}); err != nil {
				return err
			}
		}
		for _, env := range []string{"prod", "zz-desired-only"} {
			if err := tx.PutDesired(ctx, hub.Desired{Environment: env, Revision: "r1", Assignments: []hub.DesiredAssignment{}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a-env", "dev", "prod", "stage", "zz-desired-only"}, list()); diff != "" {
		t.Errorf("Environments (-want +got):\n%s", diff)
	}
}

// testInsertMany: InsertClusters adds every cluster of a call as written (labels, times,
// token hash), refuses a call that names a registered cluster or one cluster twice, and
// PutTokens stores the last of two tokens with the same hash.
func (s suite) testInsertMany(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 12, 0, 0, 123000000, time.UTC) // both stores keep milliseconds
	want := []hub.ClusterRecord{
		{Cluster: hub.Cluster{Name: "b", Environment: "dev", ClusterType: "x", Labels: map[string]string{"zone": "eu"}, RegisteredAt: at},
			TokenHash: hub.HashToken("b")},
		{Cluster: hub.Cluster{Name: "a", Environment: "prod", ClusterType: "y", Labels: map[string]string{}, RegisteredAt: at},
			TokenHash: hub.HashToken("a"), Reported: true, Revision: "r1", Status: hub.Compliant, ObservedAt: at, ReceivedAt: at, Fresh: true},
	}
	if err := store.Update(ctx, func(tx hub.Tx) error { return tx.InsertClusters(ctx, want...) }); err != nil {
		t.Fatal(err)
	}
	for _, refused := range [][]hub.ClusterRecord{
		{{Cluster: hub.Cluster{Name: "c", Environment: "dev", ClusterType: "x"}}, {Cluster: hub.Cluster{Name: "a", Environment: "dev", ClusterType: "x"}}},
		{{Cluster: hub.Cluster{Name: "d", Environment: "dev", ClusterType: "x"}}, {Cluster: hub.Cluster{Name: "d", Environment: "dev", ClusterType: "x"}}},
	} {
		err := store.Update(ctx, func(tx hub.Tx) error { return tx.InsertClusters(ctx, refused...) })
		if !errors.Is(err, hub.ErrExists) {
			t.Errorf("InsertClusters(%s, %s): %v, want ErrExists", refused[0].Name, refused[1].Name, err)
		}
	}
	err := store.View(ctx, func(r hub.Reader) error {
		got, err := r.Clusters(ctx, "")
		if err != nil {
			return err
		}
		if diff := cmp.Diff([]hub.ClusterRecord{want[1], want[0]}, got); diff != "" {
			t.Errorf("clusters after the refused calls (-want +got):\n%s", diff)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	checkPutTokens(ctx, t, store, at)
}

// checkPutTokens stores three tokens, two of them with the same hash, in one call.
func checkPutTokens(ctx context.Context, t *testing.T, store hub.Store, at time.Time) {
	t.Helper()
	first := hub.Token{Hash: hub.HashToken("same"), Kind: hub.TokenRead, Name: "first", CreatedAt: at}
	other := hub.Token{Hash: hub.HashToken("other"), Kind: hub.TokenCluster, Cluster: "a", CreatedAt: at, ExpiresAt: at.Add(time.Hour)}
	last := first
	last.Name, last.ExpiresAt = "last", at.Add(time.Minute)
	if err := store.Update(ctx, func(tx hub.Tx) error { return tx.PutTokens(ctx, first, other, last) }); err != nil {
		t.Fatal(err)
	}
	err := store.View(ctx, func(r hub.Reader) error {
		for _, want := range []hub.Token{last, other} {
			got, err := r.Token(ctx, want.Hash)
			if err != nil {
				return err
			}
			want.ID = hub.TokenID(want.Hash)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("token %s (-want +got):\n%s", want.Name, diff)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
