package controlplane

import (
	"context"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// AccessPolicies reads the access policies of the common part at its tip: in the Kalypso
// layout the main branch, in the folder layout everything outside environments/ at the tip
// branch (a directory: as it is). They are what a change of the control plane is judged by;
// an environment's own snapshot holds the policies promoted into it. The diagnostics are
// those of the policies (a policy with errors is left out).
func (cp *ControlPlane) AccessPolicies(ctx context.Context) ([]*AccessPolicy, []Diagnostic, error) {
	ref, exclude := cp.opts.Ref, []string{environmentsDir}
	if cp.layout == LayoutKalypso {
		ref, exclude = cp.mainRef(), []string{".environments/"}
	}
	b := newBuilder("", cp.layout)
	b.reads = &reads{}
	tree, err := b.reads.tree(cp.repo, "", ref)
	if err != nil {
		return nil, nil, err
	}
	docs, diags, err := section{tree: tree, root: ".", exclude: exclude}.read(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range diags {
		if d.Kind == v1alpha1.KindAccessPolicy {
			b.diag(d)
		}
	}
	for _, d := range docs {
		if d.kind == v1alpha1.KindAccessPolicy {
			b.add(d, fromCommon, nil)
		}
	}
	return b.snap.AccessPolicies, b.snap.Diagnostics, nil
}
