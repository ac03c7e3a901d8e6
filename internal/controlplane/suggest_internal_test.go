package controlplane

import (
	"testing"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"dev", "dve", 2},
	} {
		if got := levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := levenshtein(c.b, c.a); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	names := []string{"environment", "clusterType", "workload"}
	for _, c := range []struct {
		name   string
		within int
		want   string
	}{
		{"envronment", 2, "environment"},
		{"clustertype", 0, "clusterType"}, // case is ignored
		{"workloads", 1, "workload"},
		{"workloads", 0, ""},
		{"zzz", 2, ""},
	} {
		if got := Closest(c.name, names, c.within); got != c.want {
			t.Errorf("Closest(%q, within %d) = %q, want %q", c.name, c.within, got, c.want)
		}
	}
}
