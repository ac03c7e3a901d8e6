package authoring

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// ParseSelector turns kubectl's -l syntax (`purpose=test,region in (east,west),!legacy`)
// into a label selector: equalities become matchLabels, everything else matchExpressions
// (sorted by key, as labels.Parse sorts them). An empty string selects everything ({}).
func ParseSelector(s string) (*v1alpha1.LabelSelector, error) {
	reqs, err := labels.ParseToRequirements(s)
	if err != nil {
		return nil, fmt.Errorf("selector %q: %w", s, err)
	}
	out := &v1alpha1.LabelSelector{}
	for _, r := range reqs {
		key, vals := r.Key(), r.ValuesUnsorted()
		slices.Sort(vals)
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals:
			if old, ok := out.MatchLabels[key]; ok && old != vals[0] {
				return nil, fmt.Errorf("selector %q: %s=%s and %s=%s can never both hold", s, key, old, key, vals[0])
			}
			if out.MatchLabels == nil {
				out.MatchLabels = map[string]string{}
			}
			out.MatchLabels[key] = vals[0]
		case selection.NotEquals:
			out.MatchExpressions = append(out.MatchExpressions, v1alpha1.LabelSelectorRequirement{Key: key, Operator: "NotIn", Values: vals})
		case selection.In:
			out.MatchExpressions = append(out.MatchExpressions, v1alpha1.LabelSelectorRequirement{Key: key, Operator: "In", Values: vals})
		case selection.NotIn:
			out.MatchExpressions = append(out.MatchExpressions, v1alpha1.LabelSelectorRequirement{Key: key, Operator: "NotIn", Values: vals})
		case selection.Exists:
			out.MatchExpressions = append(out.MatchExpressions, v1alpha1.LabelSelectorRequirement{Key: key, Operator: "Exists"})
		case selection.DoesNotExist:
			out.MatchExpressions = append(out.MatchExpressions, v1alpha1.LabelSelectorRequirement{Key: key, Operator: "DoesNotExist"})
		default:
			return nil, fmt.Errorf("selector %q: operator %q of %s has no label-selector form (use =, !=, in, notin, KEY or !KEY)", s, r.Operator(), key)
		}
	}
	return out, nil
}

// ParseLabels parses k=v pairs (each a --label flag, or one comma-separated list).
func ParseLabels(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		for item := range strings.SplitSeq(p, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(item), "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("label %q: want KEY=VALUE", item)
			}
			out[k] = v
		}
	}
	return out, nil
}

// SelectorMap is a label selector as the YAML of a document: only the parts it has.
func SelectorMap(s *v1alpha1.LabelSelector) map[string]any {
	out := map[string]any{}
	if len(s.MatchLabels) > 0 {
		ml := map[string]any{}
		for k, v := range s.MatchLabels {
			ml[k] = v
		}
		out["matchLabels"] = ml
	}
	if len(s.MatchExpressions) > 0 {
		var mes []any
		for _, e := range s.MatchExpressions {
			m := map[string]any{"key": e.Key, "operator": e.Operator}
			if len(e.Values) > 0 {
				vs := make([]any, len(e.Values))
				for i, v := range e.Values {
					vs[i] = v
				}
				m["values"] = vs
			}
			mes = append(mes, m)
		}
		out["matchExpressions"] = mes
	}
	return out
}
