package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/platform"
)

// outputOption is the -o flag.
type outputOption struct{ format string }

func (o *outputOption) bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "output format: text, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", completeOutputFormats) // the flag exists
}

func (o *outputOption) check() error {
	switch o.format {
	case "text", "json", "yaml":
		return nil
	}
	return failed(ExitUsage, fmt.Errorf("-o %q: want text, json or yaml", o.format))
}

// write prints v as JSON or YAML, or calls text for the text format.
func (o *outputOption) write(w io.Writer, v any, text func(io.Writer) error) error {
	switch o.format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	default:
		return text(w)
	}
}

// table writes aligned columns.
type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer, headers ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.row(headers...)
	return t
}

func (t *table) row(cols ...string) { fmt.Fprintln(t.tw, strings.Join(cols, "\t")) }
func (t *table) flush() error       { return t.tw.Flush() }

// diagnosticsJSON are the errors and warnings of a result, split by severity.
type diagnosticsJSON = pipeline.DiagnosticReport

func splitDiagnostics(ds []platform.Diagnostic) diagnosticsJSON { return pipeline.SplitDiagnostics(ds) }

// printDiagnostics writes one line per diagnostic: "error: file:line: Kind/name: ...".
func printDiagnostics(w io.Writer, ds []platform.Diagnostic) {
	for _, d := range ds {
		fmt.Fprintf(w, "%s: %s\n", d.Severity, d.Error())
	}
}
