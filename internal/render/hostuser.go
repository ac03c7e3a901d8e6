package render

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetform/fleetform/internal/schedule"
)

// The built-in templates for hosts without Kubernetes run each assignment as its own OS
// user: builtin/ansible-user creates it and builtin/ansible installs its ansible-pull cron
// job. hostUser computes the name as they do; a test renders them to check it.
const (
	ansibleReconciler = BuiltinPrefix + "ansible"
	ansibleNamespace  = BuiltinPrefix + "ansible-user"
	// maxHostUser is the longest user name useradd accepts.
	maxHostUser = 32
)

// hostUser is the OS user of a deployment target in an environment:
// <environment>-<target>, or, when that is longer than 32 characters, its first 23
// characters (without trailing '-' or '.'), '-' and the first 8 hex digits of its
// SHA-256 (a name hosts already have: it is not changed).
func hostUser(env, target string) string {
	u := env + "-" + target
	if len(u) <= maxHostUser {
		return u
	}
	sum := sha256.Sum256([]byte(u))
	return strings.TrimRight(u[:23], "-.") + "-" + hex.EncodeToString(sum[:4])
}

// derivesHostUsers reports whether a cluster type's templates run its assignments as the
// OS users hostUser names.
func (ts *ClusterTypeTemplates) derivesHostUsers() bool {
	return ts != nil && (ts.Reconciler != nil && ts.Reconciler.Name == ansibleReconciler ||
		ts.Namespace != nil && ts.Namespace.Name == ansibleNamespace)
}

// SharedUserError is an assignment whose OS user (see builtin/ansible-user) is the one of
// other assignments of its cluster type: none of them is rendered, since each would run as
// the others' user, read their platform config and remove the user when it goes.
type SharedUserError struct {
	User string
	// Target is the assignment's deployment target, Others those it would share User with.
	Target string
	Others []string
}

func (e *SharedUserError) Error() string {
	names := make([]string, len(e.Others))
	for i, o := range e.Others {
		names[i] = strconv.Quote(o)
	}
	none := "neither is"
	if len(e.Others) > 1 {
		none = "none of them is"
	}
	return fmt.Sprintf("deployment targets %q and %s would run as the same OS user %q on this cluster type: "+
		"%s rendered (their previous files are kept) until one is renamed", e.Target, strings.Join(names, " and "), e.User, none)
}

// sharedHostUsers finds the assignments whose OS user another assignment of the same
// cluster type has. Target names are unique in an environment, but a shortened name can
// equal a full one (a target named after another's shortened user) or another shortened
// one (8 hex digits can be found by trying names): this makes sure.
func sharedHostUsers(env string, types map[string]*typeTemplates, as []schedule.Assignment) map[*schedule.Assignment]error {
	type typeUser struct{ clusterType, user string }
	var byUser map[typeUser][]*schedule.Assignment
	var shared []typeUser
	lastType, derives := "", false
	for i := range as {
		a := &as[i]
		if i == 0 || a.ClusterType != lastType { // as are sorted by cluster type: a lookup per type
			tt := types[a.ClusterType]
			lastType, derives = a.ClusterType, tt != nil && tt.ts.derivesHostUsers()
		}
		if !derives {
			continue
		}
		if byUser == nil {
			byUser = map[typeUser][]*schedule.Assignment{}
		}
		k := typeUser{a.ClusterType, hostUser(env, a.DeploymentTarget)}
		if len(byUser[k]) == 1 {
			shared = append(shared, k)
		}
		byUser[k] = append(byUser[k], a)
	}
	if len(shared) == 0 {
		return nil
	}
	out := map[*schedule.Assignment]error{}
	for _, k := range shared {
		sharing := byUser[k]
		for _, a := range sharing {
			var others []string
			for _, o := range sharing {
				if o != a {
					others = append(others, o.DeploymentTarget)
				}
			}
			out[a] = &SharedUserError{User: k.user, Target: a.DeploymentTarget, Others: others}
		}
	}
	return out
}
