package selector_test

import (
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/selector"
)

func TestParseAndMatch(t *testing.T) {
	set := map[string]string{"region": "west-us", "size": "large", "edge": "false"}
	tests := []struct {
		name    string
		sel     *v1alpha1.LabelSelector
		want    bool
		wantErr bool
	}{
		{name: "nil selects nothing", sel: nil, want: false},
		{name: "empty selects all", sel: &v1alpha1.LabelSelector{}, want: true},
		{name: "matchLabels hit", sel: &v1alpha1.LabelSelector{MatchLabels: map[string]string{"size": "large"}}, want: true},
		{name: "matchLabels miss", sel: &v1alpha1.LabelSelector{MatchLabels: map[string]string{"size": "small"}}, want: false},
		{name: "In", sel: sel("region", "In", "east-us", "west-us"), want: true},
		{name: "NotIn", sel: sel("region", "NotIn", "west-us"), want: false},
		{name: "Exists", sel: sel("edge", "Exists"), want: true},
		{name: "DoesNotExist", sel: sel("gpu", "DoesNotExist"), want: true},
		{name: "DoesNotExist on present", sel: sel("edge", "DoesNotExist"), want: false},
		{name: "NotIn on absent key matches", sel: sel("gpu", "NotIn", "true"), want: true},
		{name: "bad operator", sel: sel("a", "Equals", "b"), wantErr: true},
		{name: "In without values", sel: sel("a", "In"), wantErr: true},
		{name: "Exists with values", sel: sel("a", "Exists", "x"), wantErr: true},
		{name: "bad key", sel: &v1alpha1.LabelSelector{MatchLabels: map[string]string{"bad key": "x"}}, wantErr: true},
		{name: "bad value", sel: &v1alpha1.LabelSelector{MatchLabels: map[string]string{"k": "has space"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := selector.Parse(tt.sel)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if got := s.Matches(labelsSet(set)); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
			if unmet := selector.Unmet(s, set); (len(unmet) == 0) != tt.want {
				t.Errorf("Unmet = %v, inconsistent with Matches = %v", unmet, tt.want)
			}
		})
	}
}

func sel(key, op string, values ...string) *v1alpha1.LabelSelector {
	return &v1alpha1.LabelSelector{MatchExpressions: []v1alpha1.LabelSelectorRequirement{{Key: key, Operator: op, Values: values}}}
}
