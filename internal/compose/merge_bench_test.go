package compose

import (
	"fmt"
	"strings"
	"testing"
)

// namedList returns a ConfigMap value holding a YAML list of n mappings named
// item-<from>, item-<from+1>, ...
func namedList(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "- name: item-%06d\n  value: %d\n", i, i)
	}
	return b.String()
}

// BenchmarkMergeNamedLists merges two lists of n named items each, half of whose names
// match: the merged list has 1.5 n items. Merging is linear when ns/item stays the same.
func BenchmarkMergeNamedLists(b *testing.B) {
	for _, n := range []int{5_000, 20_000, 80_000} {
		existing, next := ParseValue(namedList(0, n)), ParseValue(namedList(n/2, n))
		b.Run(fmt.Sprintf("items=%d", n), func(b *testing.B) {
			for b.Loop() {
				if got := Merge(existing, next).([]any); len(got) != n+n/2 {
					b.Fatalf("merged list has %d items, want %d", len(got), n+n/2)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(2*n), "ns/item")
		})
	}
}

// mapping returns a ConfigMap value holding a YAML mapping of n keys.
func mapping(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%05d: v%05d\n", i, i)
	}
	return b.String()
}

// BenchmarkParseValue parses ConfigMap values holding a YAML mapping of 10,000, 40,000 and
// 160,000 keys, and a list of 20,000 named items (as BenchmarkMergeNamedLists merges).
func BenchmarkParseValue(b *testing.B) {
	values := []struct {
		name string
		raw  string
		n    int
	}{
		{"mapping-keys=10000", mapping(10_000), 10_000},
		{"mapping-keys=40000", mapping(40_000), 40_000},
		{"mapping-keys=160000", mapping(160_000), 160_000},
		{"list-items=20000", namedList(0, 20_000), 20_000},
	}
	for _, v := range values {
		b.Run(v.name, func(b *testing.B) {
			b.SetBytes(int64(len(v.raw)))
			for b.Loop() {
				if _, ok := ParseValue(v.raw).(string); ok {
					b.Fatal("the value did not parse")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(v.n), "ns/entry")
		})
	}
}
