package cli

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// cliMayImport are the internal packages the command line adapts: the application layer,
// the services it starts, and the types it prints. A use case belongs in internal/fleet.
var cliMayImport = []string{
	"agent/host", "agent/kube", "app", "authoring", "cli/command", "controlplane", "fleet",
	"hub", "hub/api", "hub/client", "pipeline", "serve",
}

// TestCLIImportsOnlyTheApplicationLayer keeps the command line thin: it reaches the rest of
// fleetform through the packages above, so every use case stays in one place.
func TestCLIImportsOnlyTheApplicationLayer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	const internal = "github.com/fleetform/fleetform/internal/"
	used := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, internal); ok {
				used[rest] = name
			}
		}
	}
	if len(used) == 0 {
		t.Fatal("no internal import found: the test reads the wrong folder")
	}
	for p, file := range used {
		if !slices.Contains(cliMayImport, p) {
			t.Errorf("%s imports internal/%s: call it through internal/fleet (or add it to cliMayImport, with a reason)", file, p)
		}
	}
}
