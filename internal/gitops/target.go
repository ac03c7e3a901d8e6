package gitops

import "github.com/fleetform/fleetform/internal/controlplane"

// TargetOf is where fleetform writes an environment's tree: what override sets (a command
// line's), else the repository the control plane was told of for the environment
// (controlplane.Options.GitOps: the config file's), else the environment's GitOpsRepo read
// through the repo map; the branch defaults to the environment's name. Repo is "" when none
// names one.
func TargetOf(cp *controlplane.ControlPlane, s *controlplane.Snapshot, override Target) Target {
	if override.Repo == "" {
		override.Repo = cp.GitOpsOverride(s.Environment)
	}
	return TargetFor(s, override, cp.Locate)
}

// ReadBy is where the environment's clusters read its tree: TargetOf without the repo map,
// which says where fleetform reads a URL, not where a cluster does.
func ReadBy(cp *controlplane.ControlPlane, s *controlplane.Snapshot) Target {
	return TargetFor(s, Target{Repo: cp.GitOpsOverride(s.Environment)}, nil)
}

// TargetFor resolves where an environment's tree goes: what override sets, else the
// environment's GitOpsRepo, with the branch defaulting to the environment's name. locate
// maps a repository URL to where it is read (a RepoMap lookup; nil keeps URLs as they are);
// it is applied to the GitOpsRepo's URL only, never to an override.
func TargetFor(s *controlplane.Snapshot, override Target, locate func(string) string) Target {
	t := override
	if g := s.GitOpsRepo; g != nil {
		if t.Repo == "" && g.Spec.Repo != "" {
			t.Repo = g.Spec.Repo
			if locate != nil {
				t.Repo = locate(t.Repo)
			}
		}
		if t.Branch == "" {
			t.Branch = g.Spec.Branch
		}
		if t.Path == "" {
			t.Path = g.Spec.Path
		}
	}
	if t.Branch == "" {
		t.Branch = s.Environment
	}
	return t
}

// File returns the repository path of a file under the target's folder.
func (t Target) File(name string) string {
	if base := cleanPath(t.Path); base != "" {
		return base + "/" + name
	}
	return name
}
