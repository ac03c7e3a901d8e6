package selector_test

import (
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/selector"
)

// FuzzSelector checks that any selector either fails to parse or matches consistently with
// its own explanation, and never panics.
func FuzzSelector(f *testing.F) {
	f.Add("size", "large", "region", "In", "west-us", "west-us", "large")
	f.Add("", "", "edge", "Exists", "", "x", "")
	f.Add("a/b", "c", "k", "NotIn", "v", "v", "c")
	f.Add("k", "", "k", "DoesNotExist", "", "", "")
	f.Fuzz(func(t *testing.T, mlKey, mlVal, exKey, op, exVal, setRegion, setSize string) {
		s := &v1alpha1.LabelSelector{}
		if mlKey != "" {
			s.MatchLabels = map[string]string{mlKey: mlVal}
		}
		req := v1alpha1.LabelSelectorRequirement{Key: exKey, Operator: op}
		if exVal != "" {
			req.Values = []string{exVal}
		}
		s.MatchExpressions = []v1alpha1.LabelSelectorRequirement{req}
		sel, err := selector.Parse(s)
		if err != nil {
			return
		}
		set := map[string]string{"region": setRegion, "size": setSize, mlKey: mlVal}
		matches := sel.Matches(labelsSet(set))
		if unmet := selector.Unmet(sel, set); matches != (len(unmet) == 0) {
			t.Fatalf("Matches=%v but Unmet=%v for %+v on %v", matches, unmet, s, set)
		}
		if mlKey != "" && exKey != mlKey && !matches && sel.Matches(labelsSet(map[string]string{})) && mlVal != "" {
			t.Fatalf("selector requiring %s=%s matched an empty set", mlKey, mlVal)
		}
	})
}
