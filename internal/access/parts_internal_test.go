package access

import (
	"slices"
	"testing"
)

// TestPartsAreDistinct: a request naming the same workspaces and environments many times
// has as many parts as one naming each once (the parts are made before any is checked).
func TestPartsAreDistinct(t *testing.T) {
	req := Request{Workspaces: slices.Repeat([]string{"payments", "billing"}, 500), Environments: slices.Repeat([]string{"dev"}, 1000)}
	got := parts(req)
	want := []part{{workspace: "payments", environment: "dev"}, {workspace: "billing", environment: "dev"}}
	if !slices.Equal(got, want) {
		t.Errorf("parts = %v, want %v", got, want)
	}
}
