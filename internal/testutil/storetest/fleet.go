package storetest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
)

// Fleet describes a synthetic environment for benchmarks: ClusterTypes × PerType clusters
// (sim-<type>-<i>), each cluster type assigned Targets deployment targets.
type Fleet struct {
	Environment  string
	ClusterTypes int
	PerType      int
	Targets      int
	Revision     string
	// PromotedCommit is the control-plane commit the desired state was rendered from.
	PromotedCommit string
}

// ClusterType is the name of cluster type i.
func (f Fleet) ClusterType(i int) string { return fmt.Sprintf("ct-%03d", i) }

// ClusterName is the name of cluster i of cluster type t.
func (f Fleet) ClusterName(t, i int) string { return fmt.Sprintf("sim-%s-%d", f.ClusterType(t), i) }

// Desired is the fleet's desired state.
func (f Fleet) Desired() hub.Desired {
	d := hub.Desired{Environment: f.Environment, Revision: f.Revision, GitOpsRepo: "file:///gitops", Branch: f.Environment,
		PromotedCommit: f.PromotedCommit}
	for t := range f.ClusterTypes {
		for i := range f.Targets {
			d.Assignments = append(d.Assignments, hub.DesiredAssignment{Workload: fmt.Sprintf("w-%d", i),
				DeploymentTarget: fmt.Sprintf("w-%d-%s", i, f.Environment), ClusterType: f.ClusterType(t),
				Namespace: fmt.Sprintf("%s-%s-w-%d", f.Environment, f.ClusterType(t), i)})
		}
	}
	return d
}

// Seed registers the fleet's clusters, posts its desired state and makes every cluster report
// it as Compliant with every target Ready, through the hub's service (h must be running).
func (f Fleet) Seed(ctx context.Context, h *hub.Hub) error {
	const batch = 10_000
	var clusters []hub.Cluster
	for t := range f.ClusterTypes {
		for i := range f.PerType {
			clusters = append(clusters, hub.Cluster{Name: f.ClusterName(t, i), Environment: f.Environment, ClusterType: f.ClusterType(t)})
		}
	}
	for start := 0; start < len(clusters); start += batch {
		if _, err := h.RegisterClusters(ctx, clusters[start:min(start+batch, len(clusters))], false); err != nil {
			return err
		}
	}
	d := f.Desired()
	if err := h.PostDesired(ctx, d); err != nil {
		return err
	}
	return f.reportAll(ctx, h, clusters, d)
}

// reportAll sends one report per cluster from a pool of goroutines (the hub groups them).
func (f Fleet) reportAll(ctx context.Context, h *hub.Hub, clusters []hub.Cluster, d hub.Desired) error {
	var deps []hub.DeploymentReport
	for _, a := range d.Assignments[:f.Targets] {
		deps = append(deps, hub.DeploymentReport{DeploymentTarget: a.DeploymentTarget, Status: hub.Ready, Revision: f.Revision})
	}
	observed := time.Now().UTC()
	work := make(chan hub.Cluster)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for range 256 {
		wg.Go(func() {
			for c := range work {
				r := hub.Report{Cluster: c.Name, Revision: f.Revision, Status: hub.Compliant, Deployments: deps,
					ObservedAt: observed}
				if err := h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: c.Name}, r); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for _, c := range clusters {
		work <- c
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}
