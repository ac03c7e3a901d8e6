// Package selector turns the model's label selectors into Kubernetes label selectors with
// the exact semantics of metav1.LabelSelectorAsSelector, without importing metav1.
package selector

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Error is an invalid selector, with the field path of the offending part.
type Error struct {
	// Path is relative to the selector, e.g. matchExpressions[1].operator.
	Path string
	Err  error
}

func (e *Error) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

var operators = map[string]selection.Operator{
	"In":           selection.In,
	"NotIn":        selection.NotIn,
	"Exists":       selection.Exists,
	"DoesNotExist": selection.DoesNotExist,
}

// Parse converts s. A nil selector selects nothing; an empty one selects everything.
func Parse(s *v1alpha1.LabelSelector) (labels.Selector, error) {
	if s == nil {
		return labels.Nothing(), nil
	}
	if len(s.MatchLabels)+len(s.MatchExpressions) == 0 {
		return labels.Everything(), nil
	}
	reqs := make([]labels.Requirement, 0, len(s.MatchLabels)+len(s.MatchExpressions))
	keys := make([]string, 0, len(s.MatchLabels))
	for k := range s.MatchLabels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		r, err := labels.NewRequirement(k, selection.Equals, []string{s.MatchLabels[k]})
		if err != nil {
			return nil, &Error{Path: "matchLabels." + k, Err: err}
		}
		reqs = append(reqs, *r)
	}
	for i, e := range s.MatchExpressions {
		op, ok := operators[e.Operator]
		if !ok {
			return nil, &Error{Path: fmt.Sprintf("matchExpressions[%d].operator", i),
				Err: fmt.Errorf("%q is not a valid operator (In, NotIn, Exists, DoesNotExist)", e.Operator)}
		}
		r, err := labels.NewRequirement(e.Key, op, append([]string(nil), e.Values...))
		if err != nil {
			return nil, &Error{Path: fmt.Sprintf("matchExpressions[%d]", i), Err: err}
		}
		reqs = append(reqs, *r)
	}
	return labels.NewSelector().Add(reqs...), nil
}

// Unmet returns the requirements of sel that set does not satisfy, as text ("size=large",
// "edge notin (true)"), for explanations.
func Unmet(sel labels.Selector, set map[string]string) []string {
	reqs, selectable := sel.Requirements()
	if !selectable {
		return []string{"selects nothing"}
	}
	var out []string
	ls := labels.Set(set)
	for _, r := range reqs {
		if !r.Matches(ls) {
			out = append(out, r.String())
		}
	}
	return out
}
