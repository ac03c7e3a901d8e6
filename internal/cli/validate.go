package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
)

type validateOptions struct {
	cp  controlPlaneOptions
	out command.Output
}

func newValidateCmd(e *env) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use: "validate",
		Example: "  fleetform validate --control-plane ./platform\n" +
			"  fleetform validate --control-plane https://github.com/org/kalypso-control-plane --env dev -o json",
		Short: "Check the control plane: every document, selector, template, schema and reference",
		Long: "validate runs the whole pipeline (load, schedule, compose, render) for every environment,\n" +
			"or for --env, without writing anything, and reports every problem it finds, the promotion\n" +
			"chain's included (unknown sources, cycles, freeze windows).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.cp.bind(cmd, e, false)
	o.out.Bind(cmd)
	return cmd
}

func (o *validateOptions) validate() error { return o.out.Check() }

func (o *validateOptions) run(ctx context.Context, e *env) error {
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	v, err := f.Validate(ctx, o.cp.env)
	if v == nil {
		return err
	}
	printDiagnostics(e.Stderr, v.Diagnostics)
	werr := o.out.Write(e.Stdout, v, func(w io.Writer) error {
		t := command.NewTable(w, "ENVIRONMENT", "ASSIGNMENTS", "RENDERED", "ERRORS", "WARNINGS")
		for _, ev := range v.Environments {
			t.Row(ev.Environment, fmt.Sprint(ev.Assignments), fmt.Sprint(ev.Rendered), fmt.Sprint(len(ev.Errors)), fmt.Sprint(len(ev.Warnings)))
		}
		return t.Flush()
	})
	if werr != nil {
		return werr
	}
	return command.Reported(err)
}
