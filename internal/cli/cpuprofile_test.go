package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
)

// TestCPUProfile: --cpuprofile writes a profile pprof reads (gzip-compressed protocol
// buffers), and an unwritable path is a usage error.
func TestCPUProfile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.prof")
	fleetform(t, 0, "version", "--cpuprofile", file)
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Errorf("the profile does not start as gzip data: % x", data[:min(len(data), 8)])
	}
	fleetform(t, cli.ExitUsage, "version", "--cpuprofile", filepath.Join(t.TempDir(), "missing", "cpu.prof"))
}
