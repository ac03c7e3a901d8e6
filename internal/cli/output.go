package cli

import (
	"fmt"
	"io"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// diagnosticsJSON are the errors and warnings of a result, split by severity.
type diagnosticsJSON = controlplane.DiagnosticReport

func splitDiagnostics(ds []controlplane.Diagnostic) diagnosticsJSON {
	return controlplane.SplitDiagnostics(ds)
}

// printDiagnostics writes one line per diagnostic: "error: file:line: Kind/name: ...".
func printDiagnostics(w io.Writer, ds []controlplane.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintf(w, "%s: %s\n", d.Severity, d.Error())
	}
}
