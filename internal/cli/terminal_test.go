package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/cli/command"
)

// openPTY opens a pseudo-terminal and returns its terminal side.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { _ = master.Close() })
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tty.Close() })
	return tty
}

// TestStdoutTerminalSeenThroughTheCommandLine: a command's stdout is the command line's
// wrapper around the process's; onboard cluster's terminal check sees the terminal behind
// it (it did not, so a terminal got the token instead of the preview).
func TestStdoutTerminalSeenThroughTheCommandLine(t *testing.T) {
	tty := openPTY(t)
	var seen io.Writer
	code := command.Main(context.Background(), func(e *command.Env) *cobra.Command {
		return &cobra.Command{Use: "t", RunE: func(*cobra.Command, []string) error { seen = e.Stdout; return nil }}
	}, nil, nil, tty, io.Discard)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !cli.IsTerminal(seen) {
		t.Errorf("the command's stdout (%T around a terminal) is not seen as a terminal", seen)
	}
	pipeR, pipeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = pipeR.Close(), pipeW.Close() })
	if cli.IsTerminal(pipeW) {
		t.Error("a pipe is seen as a terminal")
	}
}

// TestAgentImageFollowsTheRelease: a release's onboard cluster deploys the agent of the same
// release, not :latest; a development build keeps deploy/agent's image; --agent-image wins.
func TestAgentImageFollowsTheRelease(t *testing.T) {
	for _, c := range []struct{ asked, version, want string }{
		{"", "v1.4.2", "ghcr.io/fleetform/fleetform:v1.4.2"},
		{"", "(devel)", ""},
		{"", "v0.0.0-20261129101500-abcdef123456", ""},
		{"registry.example.com/ff:1", "v1.4.2", "registry.example.com/ff:1"},
	} {
		if got := cli.AgentImage(c.asked, c.version); got != c.want {
			t.Errorf("asked %q, version %q: %q, want %q", c.asked, c.version, got, c.want)
		}
	}
}
