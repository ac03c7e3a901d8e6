package command

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// Output is the -o flag: text, json or yaml.
type Output struct{ Format string }

// Bind adds -o to cmd.
func (o *Output) Bind(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.Format, "output", "o", "text", "output format: text, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", completeFormats) // the flag exists
}

func completeFormats(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return []string{"text", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp
}

// Check refuses a format other than text, json and yaml.
func (o *Output) Check() error {
	switch o.Format {
	case "text", "json", "yaml":
		return nil
	}
	return Usagef("-o %q: want text, json or yaml", o.Format)
}

// Write prints v as JSON or YAML, or calls text for the text format.
func (o *Output) Write(w io.Writer, v any, text func(io.Writer) error) error {
	switch o.Format {
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

// Value shows a configuration value to a person as the web UI does (yamlnode.Text): a
// scalar as itself, a mapping or a list as YAML.
func Value(v any) string { return yamlnode.Text(v) }

// Table writes aligned columns.
type Table struct{ tw *tabwriter.Writer }

// NewTable starts a table with its header row.
func NewTable(w io.Writer, headers ...string) *Table {
	t := &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)}
	t.Row(headers...)
	return t
}

// Row adds a row.
func (t *Table) Row(cols ...string) { fmt.Fprintln(t.tw, strings.Join(cols, "\t")) }

// Flush writes the table.
func (t *Table) Flush() error { return t.tw.Flush() }

// failureJSON is what a command asked for -o json or yaml prints when it fails before it
// could print its own document: every command prints one document on stdout.
type failureJSON struct {
	Environment string                    `json:"environment,omitempty"`
	Errors      []controlplane.Diagnostic `json:"errors"`
}

// failureDoc describes err for failureJSON.
func failureDoc(err error) failureJSON {
	var rep *reportedError
	var xe *exitError
	switch {
	case errors.As(err, &rep):
		err = rep.err
	case errors.As(err, &xe) && xe.err == nil:
		err = errFailed
	}
	return failureJSON{Environment: pipeline.ErrorEnvironment(err), Errors: pipeline.ErrorDiagnostics(err)}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

// Unwrap returns the stream written to, so that a command can ask whether it is a terminal.
func (c *countingWriter) Unwrap() io.Writer { return c.w }

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// printFailure prints err as a failureJSON document when cmd was asked for -o json or yaml
// and printed nothing.
func printFailure(cmd *cobra.Command, stdout *countingWriter, err error) {
	if cmd == nil || stdout.n > 0 {
		return
	}
	f := cmd.Flags().Lookup("output")
	if f == nil || (f.Value.String() != "json" && f.Value.String() != "yaml") {
		return
	}
	o := Output{Format: f.Value.String()}
	_ = o.Write(stdout, failureDoc(err), nil) // stderr already has the error
}
