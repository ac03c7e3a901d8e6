package cli

import (
	"fmt"
	"io"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// printDiagnostics writes one line per diagnostic: "error: file:line: Kind/name: ...".
func printDiagnostics(w io.Writer, ds []controlplane.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintf(w, "%s: %s\n", d.Severity, d.Error())
	}
}
