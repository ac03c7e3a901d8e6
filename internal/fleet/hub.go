package fleet

import (
	"context"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

// Hub is the observability hub as the use cases need it: promotions check their gates on it
// and record their decisions (promote.Hub), applies post their desired state, app applies
// the versions they deployed.
type Hub interface {
	promote.Hub
	pipeline.DesiredPoster
	PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error
}

// RemoteHub is the hub behind a client: fleetform's commands given --hub.
func RemoteHub(c *client.Client) Hub {
	return hubOf{LocalHub: promote.LocalHub{Hub: c}, versions: c, post: func(ctx context.Context, d hub.Desired) error {
		_, err := c.PostDesired(ctx, d)
		return err
	}}
}

// HubService is what the hub answers in this process (*hub.Hub).
type HubService interface {
	promote.HubService
	pipeline.DesiredPoster
	PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error
}

// LocalHub is a hub in this process: serve's.
func LocalHub(h HubService) Hub {
	return hubOf{LocalHub: promote.LocalHub{Hub: h}, versions: h, post: h.PostDesired}
}

// hubOf adapts the hub or its client to Hub.
type hubOf struct {
	promote.LocalHub
	versions interface {
		PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error
	}
	post func(ctx context.Context, d hub.Desired) error
}

var _ Hub = hubOf{}

// PostDesired implements pipeline.DesiredPoster.
func (h hubOf) PostDesired(ctx context.Context, d hub.Desired) error { return h.post(ctx, d) }

// PostWorkloadVersion implements Hub.
func (h hubOf) PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error {
	return h.versions.PostWorkloadVersion(ctx, v)
}
