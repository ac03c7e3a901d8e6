package dev

import (
	"testing"
	"time"
)

// TestFirstRound: the first round is every cluster's first report, from the start until the
// last of them was acknowledged; none when a cluster has not reported yet.
func TestFirstRound(t *testing.T) {
	ms := time.Millisecond
	samples := []loadSample{
		{at: 0, took: 10 * ms, first: true},
		{at: 0, took: 30 * ms, first: true},
		{at: 10 * ms, took: 5 * ms},               // a second report: not in the first round
		{at: 20 * ms, took: 20 * ms, first: true}, // acknowledged at 40 ms: the end
		{at: 35 * ms, took: 100 * ms},             // later and slower, but not a first report
		{at: 15 * ms, took: 10 * ms, first: true},
	}
	got := firstRound(samples, 4)
	if got == nil || got.Reports != 4 || got.PerSecond != 100 || got.MaxMs != 30 || got.P50Ms != 20 {
		t.Fatalf("first round %+v, want 4 reports in 40 ms (100/s), p50 20 ms, max 30 ms", got)
	}
	if got := firstRound(samples, 5); got != nil {
		t.Fatalf("first round of 5 clusters, 4 reported: %+v, want none", got)
	}
}
