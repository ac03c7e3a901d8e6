package cli_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
)

// TestProfiles: --cpuprofile and --memprofile write profiles pprof reads (gzip-compressed
// protocol buffers, with the sample types of their kind), and an unwritable path is a
// usage error.
func TestProfiles(t *testing.T) {
	for flag, sampleType := range map[string]string{"--cpuprofile": "cpu", "--memprofile": "alloc_space"} {
		t.Run(flag, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "prof")
			fleetform(t, 0, "version", flag, file)
			f, err := os.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			zr, err := gzip.NewReader(f)
			if err != nil {
				t.Fatalf("the profile is not gzip data: %v", err)
			}
			data, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(data, []byte(sampleType)) {
				t.Errorf("the profile names no %q samples", sampleType)
			}
			fleetform(t, cli.ExitUsage, "version", flag, filepath.Join(t.TempDir(), "missing", "prof"))
		})
	}
}
