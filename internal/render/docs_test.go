package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/render"
)

// TestTemplatesDocListsEveryBuiltin keeps docs/templates.md true: every built-in template
// has a section there.
func TestTemplatesDocListsEveryBuiltin(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "templates.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range render.BuiltinNames() {
		if !strings.Contains(string(doc), "## `"+name+"`") {
			t.Errorf("docs/templates.md has no section for %s", name)
		}
	}
}
