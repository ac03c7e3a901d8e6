package cli

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/platform"
)

// failureJSON is what a command asked for -o json or yaml prints when it fails before it
// could print its own document: every command prints one document on stdout.
type failureJSON struct {
	Environment string                `json:"environment,omitempty"`
	Errors      []platform.Diagnostic `json:"errors"`
}

// failureDoc describes err for failureJSON.
func failureDoc(err error) failureJSON {
	doc := failureJSON{Errors: []platform.Diagnostic{}}
	var ee *pipeline.EnvError
	if errors.As(err, &ee) {
		doc.Environment = ee.Env
		err = ee.Err
	}
	var xe *exitError
	if errors.As(err, &xe) {
		err = xe.err
	}
	if err == nil {
		err = errors.New("the command failed (see the messages on stderr)")
	}
	doc.Errors = append(doc.Errors, platform.AsDiagnostics(err)...)
	return doc
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

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
	o := outputOption{format: f.Value.String()}
	_ = o.write(stdout, failureDoc(err), nil) // stderr already has the error
}
