package access

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Rights are the policies in force: those at the tip of the control plane's common part, and
// those promoted into each environment. An action in an environment needs both: a right
// takes effect in an environment once the policy that grants it is promoted there, and a
// right taken away is gone as soon as the change is merged. An action in no environment
// (authoring, token administration) is judged by the tip.
//
// Rights is safe for concurrent use: the service replaces policies as it reads them.
type Rights struct {
	mu  sync.RWMutex
	tip *Policy
	env map[string]*Policy
	// workspaces are each environment's workloads' workspaces, for requests that name a
	// workload (app promotions).
	workspaces map[string]map[string]string
}

// NewRights returns rights with no policy: only admin tokens may write until policies are set.
func NewRights() *Rights {
	return &Rights{env: map[string]*Policy{}, workspaces: map[string]map[string]string{}}
}

// SetWorkspaces sets the workspace of each workload of env (workload name → workspace).
func (r *Rights) SetWorkspaces(env string, byWorkload map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.workspaces[env] = byWorkload
}

// WorkspaceOf returns the workspace of workload in env, as last read ("" when unknown or
// of no workspace).
func (r *Rights) WorkspaceOf(env, workload string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.workspaces[env][workload]
}

// WorkloadOfTarget returns the workload of env whose deployment target target is, as last
// read: targets are named <workload>-<name>, so it is the known workload with the longest
// name that, with a dash, starts target ("" when none does).
func (r *Rights) WorkloadOfTarget(env, target string) string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	owner := ""
	for w := range r.workspaces[env] {
		if len(w) > len(owner) && strings.HasPrefix(target, w+"-") {
			owner = w
		}
	}
	return owner
}

// SetTip sets the policy at the tip of the common part (nil: none).
func (r *Rights) SetTip(p *Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tip = p
}

// SetEnvironment sets the policy promoted into env (nil: none).
func (r *Rights) SetEnvironment(env string, p *Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.env[env] = p
}

// Decide answers whether id may make req, with the reason (see Rights).
func (r *Rights) Decide(id Identity, req Request) Decision {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d := r.tip.Decide(id, req)
	if !d.Allowed || id.Admin || len(req.Environments) == 0 {
		return d
	}
	for _, e := range slices.Sorted(slices.Values(req.Environments)) {
		p, known := r.env[e]
		if !known {
			return Decision{Reason: fmt.Sprintf("%s may not %s in environment %s: its access policies are not read yet", id, req.Action, e)}
		}
		one := req
		one.Environments = []string{e}
		if ed := p.Decide(id, one); !ed.Allowed {
			ed.Reason += fmt.Sprintf(" (the policy promoted into %s; the tip's would allow it once promoted)", e)
			return ed
		}
	}
	return d
}

// Enforced reports whether the control plane has access policies at its tip (without, only
// admin tokens write through fleetform, and the command line's own git credentials are
// the boundary).
func (r *Rights) Enforced() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tip != nil
}

// Roles are the roles the identity holds at the tip.
func (r *Rights) Roles(id Identity) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tip.Roles(id)
}

// Can reports whether the identity holds a rule for action at the tip (see Policy.Can).
func (r *Rights) Can(id Identity, action string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tip.Can(id, action)
}
