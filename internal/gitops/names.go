package gitops

import (
	"fmt"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// checkTarget refuses a GitOps path git cannot check out, or that leaves the repository:
// the GitOpsRepo's, with the error located in its file, or an override such as --path.
func checkTarget(in Input) error {
	if g := in.Snapshot.GitOpsRepo; g != nil && in.Target.Path == g.Spec.Path {
		if d := g.CheckPath(); d != nil {
			return *d // a controlplane.Diagnostic: the CLI reports it with its location
		}
	}
	if err := controlplane.CheckGitOpsPath(in.Target.Path); err != nil {
		return fmt.Errorf("GitOps %w", err)
	}
	return nil
}
