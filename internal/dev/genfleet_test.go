package dev

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/testutil/clitest"
)

// runDev runs fleetform-dev, or fleetform for a first word "fleetform".
func runDev(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	main := Main
	if args[0] == "fleetform" {
		main, args = cli.Main, args[1:]
	}
	code = main(t.Context(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// validateJSON is the part of fleetform validate -o json the tests read.
type validateJSON struct {
	Valid        bool `json:"valid"`
	Environments []struct {
		Rendered int   `json:"rendered"`
		Warnings []any `json:"warnings"`
	} `json:"environments"`
}

func TestGenFleet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	code, out, stderr := runDev(t, "gen-fleet", "--targets", "20", "--cluster-types", "5", "--out", dir)
	if code != command.ExitOK {
		t.Fatalf("gen-fleet: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "assignments: 100 (20 deployment targets x 5 cluster types)") {
		t.Errorf("gen-fleet output:\n%s", out)
	}

	code, out, stderr = runDev(t, "fleetform", "validate", "--control-plane", dir, "--env", "dev", "-o", "json")
	if code != command.ExitOK {
		t.Fatalf("validate: exit %d\n%s%s", code, out, stderr)
	}
	var v validateJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	if !v.Valid || len(v.Environments) != 1 || v.Environments[0].Rendered != 100 || len(v.Environments[0].Warnings) != 0 {
		t.Errorf("validate: %s", out)
	}

	// The same flags write the same bytes.
	again := filepath.Join(t.TempDir(), "fleet")
	if code, _, stderr := runDev(t, "gen-fleet", "--targets", "20", "--cluster-types", "5", "--out", again); code != command.ExitOK {
		t.Fatalf("second gen-fleet: exit %d\n%s", code, stderr)
	}
	if a, b := readTree(t, dir), readTree(t, again); a != b {
		t.Error("two runs with the same flags wrote different files")
	}
}

func readTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p[len(dir):] + "\n")
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestGenFleetJSON(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fleet")
	code, out, stderr := runDev(t, "gen-fleet", "--targets", "3", "--cluster-types", "2", "--env", "qa", "--seed", "9", "--out", dir, "-o", "json")
	if code != command.ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc genFleetJSON
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Out != dir || doc.Environment != "qa" || doc.Seed != 9 || doc.Assignments != 6 || doc.Files == 0 {
		t.Errorf("json: %s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "environments", "qa", "gitops-repo.yaml")); err != nil {
		t.Error(err)
	}
}

func TestGenFleetErrors(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"gen-fleet"}, command.ExitUsage, "--out is required"},
		{[]string{"gen-fleet", "--out", t.TempDir(), "--targets", "0"}, command.ExitUsage, "at least 1"},
		{[]string{"gen-fleet", "--out", t.TempDir(), "--cluster-types", "-2"}, command.ExitUsage, "at least 1"},
		{[]string{"gen-fleet", "--out", t.TempDir(), "--env", "Prod"}, command.ExitUsage, "DNS label"},
		{[]string{"gen-fleet", "--out", t.TempDir(), "-o", "xml"}, command.ExitUsage, "-o"},
		{[]string{"gen-fleet", "--out", full}, command.ExitFailed, "not empty"},
	} {
		code, _, stderr := runDev(t, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
	if entries, _ := os.ReadDir(full); len(entries) != 1 {
		t.Errorf("gen-fleet wrote into a non-empty folder: %d entries", len(entries))
	}
}

// TestEveryCommandHasExamples: every command's --help shows examples that parse.
func TestEveryCommandHasExamples(t *testing.T) {
	clitest.CheckExamples(t, func() *cobra.Command {
		return newRoot(&env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	})
}
