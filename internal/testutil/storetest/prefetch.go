package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// testPrefetchedDeployments: deployments read ahead for several clusters are what
// Deployments returns (none for a cluster without any), and a cluster's deployments written
// later in the transaction are read back, not the read-ahead.
func (s suite) testPrefetchedDeployments(t *testing.T) {
	store, _ := s.open(t)
	ctx := context.Background()
	since := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	web := hub.DeploymentState{DeploymentTarget: "web", Namespace: "shop", Status: hub.Ready, Revision: "v1", Since: since}
	err := store.Update(ctx, func(tx hub.Tx) error {
		for _, n := range []string{"a", "b"} {
			if err := tx.InsertClusters(ctx, hub.ClusterRecord{Cluster: hub.Cluster{Name: n, Environment: "dev", ClusterType: "x"}}); err != nil {
				return err
			}
		}
		return tx.SetDeployments(ctx, "a", []hub.DeploymentState{web}, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := web
	failed.Status = hub.Failed
	err = store.Update(ctx, func(tx hub.Tx) error {
		if _, err := tx.LockClusters(ctx, []string{"a", "b"}); err != nil {
			return err
		}
		if err := tx.PrefetchDeployments(ctx, []string{"a", "b"}); err != nil {
			return err
		}
		a, err := tx.Deployments(ctx, "a")
		if err != nil {
			return err
		}
		if len(a) != 1 || a[0] != web {
			t.Errorf("a's prefetched deployments are %+v, want [%+v]", a, web)
		}
		if b, err := tx.Deployments(ctx, "b"); err != nil || len(b) != 0 {
			t.Errorf("b's prefetched deployments are %+v (%v), want none", b, err)
		}
		if err := tx.SetDeployments(ctx, "a", []hub.DeploymentState{failed}, nil); err != nil {
			return err
		}
		a, err = tx.Deployments(ctx, "a")
		if err != nil {
			return err
		}
		if len(a) != 1 || a[0] != failed {
			t.Errorf("after SetDeployments, a's deployments are %+v, want [%+v]", a, failed)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
