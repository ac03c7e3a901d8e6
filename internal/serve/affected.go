package serve

import (
	"maps"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// envFacts is what serve remembers of an environment's last load: enough to tell which
// changes of which sources reach it.
type envFacts struct {
	// pinned: the common content is read at a pinned commit (it changes by promotion only).
	pinned bool
	// branch is the control-plane branch of the environment's own content (Kalypso layout).
	branch string
	// workloads maps the key of each registration's repository to the registrations read
	// from it; withTargets are the registrations that have deployment targets here.
	workloads   map[string][]string
	withTargets map[string]bool
	// bases are the keys of the repositories its BaseRepos read (other than the control plane).
	bases map[string]bool
}

// factsOf records what a snapshot reads from where.
func factsOf(s *controlplane.Snapshot, branch string) *envFacts {
	f := &envFacts{pinned: s.Revisions.Pinned, branch: branch, workloads: map[string][]string{},
		withTargets: map[string]bool{}, bases: map[string]bool{}}
	for _, reg := range s.Registrations {
		k := sourceKey(reg.Spec.Workload.Repo, reg.Spec.Workload.Branch)
		f.workloads[k] = append(f.workloads[k], reg.Metadata.Name)
	}
	for _, dt := range s.DeploymentTargets {
		if dt.Environment == s.Environment && dt.Registration != "" {
			f.withTargets[dt.Registration] = true
		}
	}
	for _, br := range s.ExtraBaseRepos {
		f.bases[sourceKey(br.Spec.Repo, br.Spec.Branch)] = true
	}
	return f
}

// controlPlaneChange is what moved in the control plane: the branches, and in the folder
// layout the files (nil: unknown, everything may have changed).
type controlPlaneChange struct {
	branches []string
	files    []string
}

// affectedByControlPlane returns the environments a control-plane change reaches: in the
// Kalypso layout, an environment branch's environment, and main's change every environment
// that follows the tip; in the folder layout, environments/<env>/ its environment, and the
// rest every environment that follows the tip. Environments not loaded yet are always in.
func affectedByControlPlane(layout controlplane.Layout, mainBranch string, c controlPlaneChange, envs []string, facts map[string]*envFacts) map[string]bool {
	out := map[string]bool{}
	common := false
	switch {
	case layout == controlplane.LayoutKalypso:
		for _, b := range c.branches {
			if b == mainBranch || b == "HEAD" {
				common = true
			}
			for env, f := range facts {
				if f.branch == b {
					out[env] = true
				}
			}
		}
	case c.files == nil:
		common = true
		for _, env := range envs {
			out[env] = true
		}
	default:
		for _, file := range c.files {
			rest, ok := strings.CutPrefix(file, "environments/")
			if env, _, inEnv := strings.Cut(rest, "/"); ok && inEnv {
				out[env] = true
			} else {
				common = true
			}
		}
	}
	for _, env := range envs {
		f := facts[env]
		if f == nil || (common && !f.pinned) {
			out[env] = true
		}
	}
	return keep(out, envs)
}

// affectedBySource returns the environments that read a workload or base repository.
func affectedBySource(key, kind string, envs []string, facts map[string]*envFacts) map[string]bool {
	out := map[string]bool{}
	for _, env := range envs {
		f := facts[env]
		switch {
		case f == nil:
			out[env] = true
		case kind == KindWorkload && len(f.workloads[key]) > 0:
			out[env] = true
		case kind == KindBase && f.bases[key]:
			out[env] = true
		}
	}
	return out
}

// keep drops the environments that are not served.
func keep(set map[string]bool, envs []string) map[string]bool {
	for _, env := range slices.Collect(maps.Keys(set)) {
		if !slices.Contains(envs, env) {
			delete(set, env)
		}
	}
	return set
}
