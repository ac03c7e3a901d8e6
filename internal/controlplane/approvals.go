package controlplane

import "fmt"

// MaxApprovals bounds spec.promotion.approvals.count.
const MaxApprovals = 20

// ApprovalRule is an environment's approval requirement: how many approvals from distinct
// identities a promotion into it needs (0: none) and whether the author of the change
// promoted may approve it.
type ApprovalRule struct {
	Count              int
	DistinctFromAuthor bool
}

// ApprovalRule reads spec.promotion.approval and spec.promotion.approvals (optional; a
// Kalypso Environment has neither). approval: true alone needs one approval; approvals
// needs count (default 1) approvals. A count below 0 or above MaxApprovals is a located
// error, and the rule then needs MaxApprovals (a broken rule never loosens a gate).
func (e *Environment) ApprovalRule() (ApprovalRule, []Diagnostic) {
	var r ApprovalRule
	if e == nil || e.Spec.Promotion == nil {
		return r, nil
	}
	p := e.Spec.Promotion
	if p.Approval {
		r.Count = 1
	}
	a := p.Approvals
	if a == nil {
		return r, nil
	}
	r.DistinctFromAuthor = a.DistinctFromAuthor
	switch {
	case a.Count < 0 || a.Count > MaxApprovals:
		r.Count = MaxApprovals
		return r, []Diagnostic{e.Source.Diag("spec.promotion.approvals.count",
			fmt.Sprintf("%d approvals: must be between 0 and %d", a.Count, MaxApprovals), "for example count: 2")}
	case a.Count == 0:
		r.Count = 1
	default:
		r.Count = a.Count
	}
	return r, nil
}
