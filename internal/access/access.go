// Package access decides who may change what: "may this identity do this action on these
// objects?", answered with the reason, from the control plane's AccessPolicy documents.
//
// Every write asks it (authoring, promotions, approvals, overrides, token administration).
// Everyone signed in may read; an admin token may do everything; without any AccessPolicy
// only admin tokens may write, as before policies existed.
package access

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Identity is who asks: a person signed in through the identity provider, a CI job with a
// trusted issuer's token, or a hub token.
type Identity struct {
	// Issuer and Subject identify a person or job signed in with OpenID Connect.
	Issuer  string `json:"issuer,omitempty"`
	Subject string `json:"subject,omitempty"`
	Name    string `json:"name,omitempty"`
	Email   string `json:"email,omitempty"`
	// Groups are the identity provider's groups claim.
	Groups []string `json:"groups,omitempty"`
	// Claims are a trusted issuer's claims (repository, ref, environment, ...), as strings.
	Claims map[string]string `json:"claims,omitempty"`
	// Job marks an identity that a further trusted issuer (a CI platform's) vouches for: a
	// job, not a person of the company, so that user and group subjects never match it.
	Job bool `json:"job,omitempty"`
	// Token is the name of the hub token used, when one was.
	Token string `json:"token,omitempty"`
	// Admin is set for an admin token: it may do everything.
	Admin bool `json:"admin,omitempty"`
}

// String names the identity for messages and the audit history.
func (id Identity) String() string {
	switch {
	case id.Email != "":
		return id.Email
	case id.Name != "":
		return id.Name
	case id.Subject != "":
		return id.Subject
	case id.Token != "":
		return "token " + id.Token
	}
	return "anonymous"
}

// Actor names the identity in commit messages and the history: a person by their email
// (else name, else subject), a token by its name.
func (id Identity) Actor() string {
	for _, name := range []string{id.Email, id.Name, id.Subject, id.Token} {
		if name != "" {
			return name
		}
	}
	return ""
}

// Request is an action on objects: the workspaces and environments it touches, and whether
// it touches the platform's objects.
type Request struct {
	// Action is one of v1alpha1's Action* constants.
	Action string
	// Workspaces are the workspaces whose objects the action changes or promotes.
	Workspaces []string
	// Environments are the environments the action is in ("" is none).
	Environments []string
	// Platform is set when the action changes the platform's objects (author).
	Platform bool
}

// Decision is the answer, with its reason.
type Decision struct {
	Allowed bool `json:"allowed"`
	// Reason says why, in words a person reads.
	Reason string `json:"reason"`
	// Roles are the roles that allowed the request.
	Roles []string `json:"roles,omitempty"`
}

// DeniedError is a request the access policies do not allow: nothing was done. The
// decision says why.
type DeniedError struct{ Decision Decision }

func (e *DeniedError) Error() string { return e.Decision.Reason }

// Err is nil when the decision allows, else a DeniedError.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &DeniedError{Decision: d}
}

// Policy is the control plane's access policies, compiled for deciding.
type Policy struct {
	roles   []role
	byGroup map[string][]int
	byUser  map[string][]int
	byToken map[string][]int
	byClaim []int // roles with a claim subject: matched one by one
}

type role struct {
	name, policy string
	claims       []map[string]string
	rules        []v1alpha1.AccessRule
}

// Compile builds the policy of the given documents; nil when there are none, which lets only
// admin tokens write. Documents that fail Check must be left out by the caller (the control
// plane leaves out every document with errors): a malformed policy grants nothing.
func Compile(policies []*v1alpha1.AccessPolicy) *Policy {
	if len(policies) == 0 {
		return nil
	}
	p := &Policy{byGroup: map[string][]int{}, byUser: map[string][]int{}, byToken: map[string][]int{}}
	for _, ap := range policies {
		for _, r := range ap.Spec.Roles {
			i := len(p.roles)
			p.roles = append(p.roles, role{name: r.Name, policy: ap.Metadata.Name, rules: r.Allow})
			for _, s := range r.Subjects {
				switch {
				case s.Group != "":
					p.byGroup[s.Group] = append(p.byGroup[s.Group], i)
				case s.User != "":
					p.byUser[s.User] = append(p.byUser[s.User], i)
				case s.Token != "":
					p.byToken[s.Token] = append(p.byToken[s.Token], i)
				case len(s.Claim) > 0:
					p.roles[i].claims = append(p.roles[i].claims, s.Claim)
					if len(p.roles[i].claims) == 1 {
						p.byClaim = append(p.byClaim, i)
					}
				}
			}
		}
	}
	return p
}

// Roles are the names of the roles the identity holds, sorted.
func (p *Policy) Roles(id Identity) []string {
	out := p.names(p.held(id))
	sort.Strings(out)
	return slices.Compact(out)
}

// Can reports whether the identity holds a rule for action in some scope: whether a page
// should offer the action at all (each request is still decided on its own).
func (p *Policy) Can(id Identity, action string) bool {
	if id.Admin {
		return true
	}
	for _, i := range p.held(id) {
		for _, r := range p.roles[i].rules {
			if r.Action == action {
				return true
			}
		}
	}
	return false
}

// held are the indexes of the roles the identity holds, in the policy's order, once each.
func (p *Policy) held(id Identity) []int {
	if p == nil {
		return nil
	}
	var out []int
	for _, g := range id.Groups {
		out = append(out, p.byGroup[g]...)
	}
	for _, u := range []string{id.Email, id.Subject} {
		if u != "" && !id.Job {
			out = append(out, p.byUser[u]...)
		}
	}
	if id.Token != "" {
		out = append(out, p.byToken[id.Token]...)
	}
	for _, i := range p.byClaim {
		if slices.ContainsFunc(p.roles[i].claims, func(c map[string]string) bool { return claimsMatch(id, c) }) {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return slices.Compact(out)
}

// claimsMatch reports whether the identity's claims hold every value of want ("iss": its
// issuer, "sub": its subject).
func claimsMatch(id Identity, want map[string]string) bool {
	if id.Issuer == "" {
		return false // claims come only with a token from an issuer
	}
	for k, v := range want {
		got, ok := id.Claims[k]
		switch k {
		case "iss":
			got, ok = id.Issuer, true
		case "sub":
			got, ok = id.Subject, true
		}
		if !ok || got != v {
			return false
		}
	}
	return true
}

// Decide answers whether id may make req, and why. Every part of the request (each
// workspace, or the platform, in each environment) must be allowed by a rule of a role the
// identity holds; the roles may differ from part to part.
func (p *Policy) Decide(id Identity, req Request) Decision {
	if id.Admin {
		return Decision{Allowed: true, Reason: fmt.Sprintf("%s is an admin token", id)}
	}
	if p == nil {
		return Decision{Reason: fmt.Sprintf("%s may not %s: the control plane has no AccessPolicy, so only admin tokens may change anything", id, req.Action)}
	}
	held := p.held(id)
	granted := map[string]bool{}
	for _, part := range parts(req) {
		i, ok := p.allowing(held, req.Action, part)
		if !ok {
			return Decision{Reason: denial(id, req.Action, part, p.names(held))}
		}
		granted[p.roles[i].name] = true
	}
	roles := sortedKeys(granted)
	return Decision{Allowed: true, Roles: roles, Reason: fmt.Sprintf("%s may %s: allowed by role %s", id, req.Action, strings.Join(roles, ", "))}
}

// part is one thing a request touches: a workspace or the platform (or neither), in an
// environment (or none).
type part struct {
	workspace   string
	platform    bool
	environment string
}

// parts splits a request into the parts each rule is checked against, each once (a request
// that names a workspace or an environment many times costs no more than naming it once).
func parts(req Request) []part {
	var what []part
	for _, w := range distinct(req.Workspaces) {
		what = append(what, part{workspace: w})
	}
	if req.Platform || len(what) == 0 {
		what = append(what, part{platform: req.Platform})
	}
	envs := distinct(req.Environments)
	if len(envs) == 0 {
		return what
	}
	out := make([]part, 0, len(what)*len(envs))
	for _, e := range envs {
		for _, w := range what {
			w.environment = e
			out = append(out, w)
		}
	}
	return out
}

// distinct is list without its repeats, in order.
func distinct(list []string) []string {
	seen := make(map[string]bool, len(list))
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool {
		dup := seen[s]
		seen[s] = true
		return dup
	})
}

// allowing returns the first held role with a rule allowing action on the part.
func (p *Policy) allowing(held []int, action string, pt part) (int, bool) {
	for _, i := range held {
		for _, r := range p.roles[i].rules {
			if r.Action == action && covers(r, pt) {
				return i, true
			}
		}
	}
	return 0, false
}

// covers reports whether a rule's scope includes the part. A rule without workspaces covers
// every workspace, and what belongs to none, except for author, where it covers only the
// platform's objects and only with platform: true. A rule without environments covers
// every environment.
func covers(r v1alpha1.AccessRule, pt part) bool {
	if pt.environment != "" && len(r.Environments) > 0 && !inScope(r.Environments, pt.environment) {
		return false
	}
	switch {
	case pt.platform:
		return r.Platform
	case pt.workspace != "":
		if len(r.Workspaces) == 0 {
			return r.Action != v1alpha1.ActionAuthor
		}
		return inScope(r.Workspaces, pt.workspace)
	case r.Action == v1alpha1.ActionAuthor:
		return r.Platform
	}
	return len(r.Workspaces) == 0
}

func inScope(scope []string, name string) bool {
	return slices.Contains(scope, "*") || slices.Contains(scope, name)
}

func denial(id Identity, action string, pt part, roles []string) string {
	what := ""
	switch {
	case pt.platform:
		what = " the platform's objects"
	case pt.workspace != "":
		what = " in workspace " + pt.workspace
	}
	if pt.environment != "" {
		what += " in environment " + pt.environment
	}
	held := "holds no role"
	if len(roles) > 0 {
		held = "holds " + strings.Join(roles, ", ")
	}
	return fmt.Sprintf("%s may not %s%s: no role allows it (%s %s)", id, action, what, id, held)
}

func (p *Policy) names(held []int) []string {
	out := make([]string, 0, len(held))
	for _, i := range held {
		out = append(out, p.roles[i].name)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
