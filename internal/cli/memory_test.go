package cli

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestBudgetMemory: apply and plan run under memoryBudget and collect at their GOGC
// (collection off for plan), unless GOMEMLIMIT and GOGC say otherwise (then the runtime
// keeps what they set).
func TestBudgetMemory(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(name, "") // restored after the test
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
	if fleetCommands["apply"] != applyGCPercent || fleetCommands["plan"] != planGCPercent || planGCPercent >= 0 {
		t.Errorf("fleet commands' collector settings: %v", fleetCommands)
	}
	for _, gcPercent := range []int{applyGCPercent, planGCPercent} {
		budgetMemory(gcPercent)
		if got := debug.SetGCPercent(77); got != gcPercent {
			t.Errorf("GOGC unset: the collector runs at %d%%, want %d%%", got, gcPercent)
		}
	}
	if got := debug.SetMemoryLimit(1 << 40); got != memoryBudget {
		t.Errorf("GOMEMLIMIT unset: the memory limit is %d, want %d", got, memoryBudget)
	}

	t.Setenv("GOGC", "77")
	t.Setenv("GOMEMLIMIT", "1TiB")
	budgetMemory(applyGCPercent)
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("GOGC set: the collector runs at %d%%, want the 77%% it was left at", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 1<<40 {
		t.Errorf("GOMEMLIMIT set: the memory limit is %d, want the 1 TiB it was left at", got)
	}
}
