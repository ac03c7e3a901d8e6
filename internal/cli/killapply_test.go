package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// writingPack is the debug line the pack writer logs once its temporary pack is created.
var writingPack = regexp.MustCompile(`msg="writing pack" file=(\S+)`)

// stallAtPackMain is the command fleetform-stall-at-pack of the test binary: fleetform,
// whose stderr, once it logs that it is writing a pack, passes the line on and then blocks
// the writer for good (reading stdin, which the test never writes to), so that the test can
// kill the process while its temporary pack exists, without timing anything.
func stallAtPackMain() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], nil, os.Stdout, stallAtPack{os.Stderr}))
}

type stallAtPack struct{ w io.Writer }

func (s stallAtPack) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if writingPack.Match(p) {
		_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	}
	return n, err
}

// TestKilledApplyIsCleanedUp kills an apply (SIGKILL) while it writes its pack: the branch
// does not move and the temporary pack stays behind. The next apply converges (commits, and
// the repository passes git fsck) and keeps that file while it is recent; once it is over
// an hour old, the next apply removes it.
func TestKilledApplyIsCleanedUp(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGKILL")
	}
	k := gittest.NewKalypso(t)
	repo := gittest.NewBare(t).Checked(t)
	args := []string{"apply", "--control-plane", k.ControlPlane.Dir, "--env", "dev",
		"--repo-map=" + gittest.SvcSrcURL + "=" + k.SvcSrc.Dir, "--gitops", repo.Dir}

	tmp := killAtPack(t, append(args, "--log-level", "debug"))
	if !strings.HasPrefix(tmp, filepath.Join(repo.Dir, "objects", "fleetform-tmp")+string(filepath.Separator)) {
		t.Fatalf("temporary pack %s, want one in objects/fleetform-tmp", tmp)
	}
	if _, err := os.Stat(tmp); err != nil {
		t.Fatalf("the killed apply left no temporary pack: %v", err)
	}
	if tip := repo.Tip(t, "dev"); !tip.IsZero() {
		t.Fatalf("the killed apply moved dev to %s", tip)
	}

	// The next apply converges; the recent file may be a concurrent apply's: kept.
	fleetform(t, cli.ExitOK, args...)
	if tip := repo.Tip(t, "dev"); tip.IsZero() {
		t.Fatal("the apply after the kill did not commit")
	}
	gittest.Fsck(t, repo.Dir)
	if _, err := os.Stat(tmp); err != nil {
		t.Errorf("a recent temporary pack was removed: %v", err)
	}

	// An hour later, the next apply (with nothing to commit) removes it.
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if out := fleetform(t, cli.ExitOK, args...); !strings.Contains(out, "no change") {
		t.Errorf("third apply:\n%s", out)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the stale temporary pack is still there (%v)", err)
	}
}

// killAtPack runs fleetform-stall-at-pack with args, kills it (SIGKILL) once it logs that it
// is writing a pack, and returns the temporary pack it named.
func killAtPack(t *testing.T, args []string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "fleetform-stall-at-pack", args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stdin.Close() }()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	tmp := ""
	lines := bufio.NewScanner(stderr)
	for tmp == "" && lines.Scan() {
		log.Write(lines.Bytes())
		log.WriteByte('\n')
		if m := writingPack.FindSubmatch(lines.Bytes()); m != nil {
			tmp = string(m[1])
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, stderr)
	err = cmd.Wait()
	if tmp == "" {
		t.Fatalf("apply never logged that it writes a pack (%v):\n%s", err, log.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("apply was not killed: %v\n%s", err, log.String())
	}
	return tmp
}
