package fleet

import (
	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// Permit answers whether id may make req by the Fleet's Rights (none: only admin tokens
// may): nil, or a ForbiddenError with the decision's reason.
func (f *Fleet) Permit(id access.Identity, req access.Request) error {
	return f.Decide(id, req).Err()
}

// Decide is the Fleet's Rights' decision on req by id, with its reason.
func (f *Fleet) Decide(id access.Identity, req access.Request) access.Decision {
	if f.cfg.Rights != nil {
		return f.cfg.Rights.Decide(id, req)
	}
	return access.Compile(nil).Decide(id, req)
}

// Policy compiles the access policies the control plane loaded.
func Policy(policies []*controlplane.AccessPolicy) *access.Policy {
	docs := make([]*v1alpha1.AccessPolicy, 0, len(policies))
	for _, p := range policies {
		docs = append(docs, p.AccessPolicy)
	}
	return access.Compile(docs)
}
