package gitops

import "github.com/fleetform/fleetform/internal/controlplane"

// TargetFor resolves where an environment's tree goes: what override sets, else the
// environment's GitOpsRepo, with the branch defaulting to the environment's name. Repo is
// "" when neither names one. locate maps a repository URL to where it is read (a RepoMap
// lookup; nil keeps URLs as they are); it is applied to the GitOpsRepo's URL only, never
// to an explicit override.
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
