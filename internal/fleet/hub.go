package fleet

import (
	"context"
	"fmt"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
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
	return hubOf{LocalHub: promote.LocalHub{Hub: c}, versions: c, whoami: c.WhoAmI, post: func(ctx context.Context, d hub.Desired) error {
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
	// whoami asks the hub's access policies (nil in serve's own process, which decides
	// before it calls a use case).
	whoami func(ctx context.Context, q api.WhoAmIQuery) (api.WhoAmI, error)
}

var _ Hub = hubOf{}

// PostDesired implements pipeline.DesiredPoster.
func (h hubOf) PostDesired(ctx context.Context, d hub.Desired) error { return h.post(ctx, d) }

// PostWorkloadVersion implements Hub.
func (h hubOf) PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error {
	return h.versions.PostWorkloadVersion(ctx, v)
}

// permitter is a hub that decides whether its caller may do something.
type permitter interface {
	permit(ctx context.Context, q api.WhoAmIQuery) error
}

// permit asks the hub whether the caller's token may do q: nil, or a ForbiddenError with
// the hub's reason when the control plane has access policies.
func (h hubOf) permit(ctx context.Context, q api.WhoAmIQuery) error {
	if h.whoami == nil {
		return nil
	}
	me, err := h.whoami(ctx, q)
	if err != nil {
		return fmt.Errorf("asking the hub whether %s is allowed: %w", q.Action, err)
	}
	if me.Policies && me.Decision != nil && !me.Decision.Allowed {
		return &ForbiddenError{Decision: *me.Decision}
	}
	return nil // allowed; or no policy: the command line's own git credentials decide
}

// askHub asks the Fleet's hub, when it decides, whether the caller may do q, before a use
// case writes anything (the hub refuses the records of what it does not allow anyway).
func (f *Fleet) askHub(ctx context.Context, q api.WhoAmIQuery) error {
	if p, ok := f.cfg.Hub.(permitter); ok {
		return p.permit(ctx, q)
	}
	return nil
}
