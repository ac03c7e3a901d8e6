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
	"time"

	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// stopWithin is how soon a stopped command must exit: rendering checks the signal between
// batches of 64 assignments, loading between files.
const stopWithin = time.Second

// TestSignalStopsCommandsPromptly: SIGINT or SIGTERM stops a command part way, promptly, with
// the shell's exit code (128 + the signal) and nothing half-written; the fleet (100,000
// assignments) takes several seconds to render, so a command that ignored the signal would
// run on.
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
// it to exit with code within stopWithin.
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
	signalled := time.Now()
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	took := time.Since(signalled)
	log.Write(rest)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != code {
		t.Fatalf("exit %v, want code %d\n%s", err, code, log.String())
	}
	if took > stopWithin {
		t.Errorf("stopped %s after %s, want within %s", sig, took, stopWithin)
	}
	if !strings.Contains(log.String(), "error: interrupted by "+sig.String()) {
		t.Errorf("no interruption message:\n%s", log.String())
	}
}
