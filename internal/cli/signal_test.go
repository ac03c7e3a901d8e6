package cli_test

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestSignalStopsCommandsPromptly: SIGINT or SIGTERM stops a command part way, with the
// shell's exit code (128 + the signal) and nothing half-written. The signal is sent as the
// fleet (100,000 assignments) starts rendering: a command that ignored it would render
// everything and end as usual (exit 0 or 1, the apply's branch moved), whatever the load
// of the machine; how fast it stops is measured by nothing here (rendering checks the
// signal between batches of 64 assignments, loading between files).
func TestSignalStopsCommandsPromptly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("signals")
	}
	fleet := filepath.Join(t.TempDir(), "fleet")
	if err := fleetgen.Write(fleet, fleetgen.Spec{}); err != nil {
		t.Fatal(err)
	}
	t.Run("validate, SIGTERM", func(t *testing.T) {
		stopAfter(t, syscall.SIGTERM, 143, "validate", "--control-plane", fleet)
	})
	t.Run("apply, SIGINT", func(t *testing.T) {
		repo := gittest.NewBare(t).Checked(t)
		stopAfter(t, syscall.SIGINT, 130, "apply", "--control-plane", fleet, "--env", "dev", "--gitops", repo.Dir)
		if tip := repo.Tip(t, "dev"); !tip.IsZero() {
			t.Errorf("the stopped apply moved dev to %s", tip)
		}
	})
}

// stopAfter runs fleetform with args, sends sig once it has started rendering, and requires
// it to exit with code, saying it was interrupted.
func stopAfter(t *testing.T, sig syscall.Signal, code int, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "fleetform", append(args, "--log-level", "debug")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var log strings.Builder
	for lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if strings.Contains(lines.Text(), `msg=rendering`) {
			break
		}
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	log.Write(rest)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != code {
		t.Fatalf("exit %v, want code %d\n%s", err, code, log.String())
	}
	if !strings.Contains(log.String(), "error: interrupted by "+sig.String()) {
		t.Errorf("no interruption message:\n%s", log.String())
	}
}
