package command

import (
	"math"
	"os"
	"runtime/debug"
	"testing"
)

// TestSetMemoryBudget: every command runs under MemoryBudget and collects at GCPercent,
// unless GOMEMLIMIT and GOGC say otherwise (then the runtime keeps what they set).
func TestSetMemoryBudget(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, name := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(name, "") // restored after the test
		if err := os.Unsetenv(name); err != nil {
			t.Fatal(err)
		}
	}
	SetMemoryBudget()
	if got := debug.SetGCPercent(77); got != GCPercent {
		t.Errorf("GOGC unset: the collector runs at %d%%, want %d%%", got, GCPercent)
	}
	if got := debug.SetMemoryLimit(1 << 40); got != MemoryBudget {
		t.Errorf("GOMEMLIMIT unset: the memory limit is %d, want %d", got, MemoryBudget)
	}

	t.Setenv("GOGC", "77")
	t.Setenv("GOMEMLIMIT", "1TiB")
	SetMemoryBudget()
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("GOGC set: the collector runs at %d%%, want the 77%% it was left at", got)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != 1<<40 {
		t.Errorf("GOMEMLIMIT set: the memory limit is %d, want the 1 TiB it was left at", got)
	}
}
