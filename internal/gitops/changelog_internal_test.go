package gitops

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestChangeLog records paths that share prefixes with the one before in every way (the
// same path twice, one a prefix of the next, nothing in common, empty), whole or as a
// folder and a name, and gets them back, in order, with their actions.
func TestChangeLog(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []string{"eastus-large-001", "westus-small-002", "shop-t1", "shop-t10", "a.yaml", "b.yaml", "", "é"}
	var want []Change
	var l changeLog
	for range 2000 {
		var b strings.Builder
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte('/')
			}
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		c := Change{Path: b.String(), Action: changeActions[rng.IntN(len(changeActions))]}
		want = append(want, c)
		if dir, name, ok := strings.Cut(c.Path, "/"); ok && dir != "" && rng.IntN(2) == 0 {
			l.addIn(dir, name, c.Action) // the same path, in two parts
		} else {
			l.add(c.Path, c.Action)
		}
	}
	p := &Plan{Changes: []Change{{Path: "before", Action: actionDelete}}}
	l.into(p)
	want = append([]Change{{Path: "before", Action: actionDelete}}, want...)
	if !slices.EqualFunc(p.Changes, want, func(a, b Change) bool { return a.Path == b.Path && a.Action == b.Action }) {
		for i := range min(len(p.Changes), len(want)) {
			if p.Changes[i].Path != want[i].Path || p.Changes[i].Action != want[i].Action {
				t.Fatalf("change %d = %s %q, want %s %q", i, p.Changes[i].Action, p.Changes[i].Path, want[i].Action, want[i].Path)
			}
		}
		t.Fatalf("%d changes, want %d", len(p.Changes), len(want))
	}
	if l.marks != nil || l.suffixes != nil {
		t.Error("the log is not emptied")
	}
}
