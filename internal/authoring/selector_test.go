package authoring

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/selector"
)

func TestParseSelector(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    *v1alpha1.LabelSelector
		wantErr bool
	}{
		{in: "", want: &v1alpha1.LabelSelector{}},
		{in: "purpose=test,region in (west,east),!legacy", want: &v1alpha1.LabelSelector{
			MatchLabels: map[string]string{"purpose": "test"},
			MatchExpressions: []v1alpha1.LabelSelectorRequirement{
				{Key: "legacy", Operator: "DoesNotExist"},
				{Key: "region", Operator: "In", Values: []string{"east", "west"}},
			}}},
		{in: "a!=b,c notin (x),d", want: &v1alpha1.LabelSelector{MatchExpressions: []v1alpha1.LabelSelectorRequirement{
			{Key: "a", Operator: "NotIn", Values: []string{"b"}}, {Key: "c", Operator: "NotIn", Values: []string{"x"}},
			{Key: "d", Operator: "Exists"}}}},
		{in: "a=b,a=c", wantErr: true},
		{in: "a>1", wantErr: true},
		{in: "a in (", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSelector(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); !tt.wantErr && diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// FuzzParseSelector: a selector kubectl accepts is either refused with an error or written
// as a label selector that selects exactly what kubectl's selects.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"", "a=b", "purpose=test,region in (west,east),!legacy", "a!=b", "x notin (1,2),y", "a==b"} {
		f.Add(s, "purpose=test,region=west,a=b,x=1,y=2")
	}
	f.Fuzz(func(t *testing.T, s, set string) {
		ours, err := ParseSelector(s)
		if err != nil {
			return
		}
		want, err := labels.Parse(s)
		if err != nil {
			t.Fatalf("ParseSelector accepted %q, labels.Parse did not: %v", s, err)
		}
		got, err := selector.Parse(ours)
		if err != nil {
			t.Fatalf("the selector written for %q does not parse: %v", s, err)
		}
		ls, err := labels.ConvertSelectorToLabelsMap(set)
		if err != nil {
			return
		}
		if want.Matches(ls) != got.Matches(ls) {
			t.Errorf("%q on %v: kubectl says %v, the written selector %v", s, ls, want.Matches(ls), got.Matches(ls))
		}
	})
}
