package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
)

type validateOptions struct {
	cp  controlPlaneOptions
	out command.Output
}

type validateJSON struct {
	Environments []validateEnvJSON `json:"environments"`
	Valid        bool              `json:"valid"`
}

type validateEnvJSON struct {
	Environment string `json:"environment"`
	Assignments int    `json:"assignments"`
	Rendered    int    `json:"rendered"`
	diagnosticsJSON
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

// dedupe drops repeated diagnostics (common content is read once per environment).
func dedupe(ds []controlplane.Diagnostic) []controlplane.Diagnostic {
	seen := map[string]bool{}
	out := ds[:0:0]
	for _, d := range ds {
		k := string(d.Severity) + d.Error()
		if !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

func (o *validateOptions) validate() error { return o.out.Check() }

func (o *validateOptions) run(ctx context.Context, e *env) error {
	cp, err := o.cp.open(ctx, e)
	if err != nil {
		return err
	}
	envs, err := o.cp.environments(ctx, cp, true)
	if err != nil {
		return err
	}
	doc := validateJSON{Environments: []validateEnvJSON{}, Valid: true}
	var all []controlplane.Diagnostic
	if infos, envDiags, err := cp.Environments(ctx); err == nil && o.cp.env == "" {
		_, chainDiags := promote.NewChain(infos)
		all = append(append(all, envDiags...), chainDiags...)
	}
	for _, name := range envs {
		r, err := runPipeline(ctx, cp, name, pipeline.UpToRender, renderDefaults())
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			// One environment that cannot be read does not stop the others.
			ds := pipeline.ErrorDiagnostics(err)
			all = append(all, ds...)
			doc.Valid = false
			doc.Environments = append(doc.Environments, validateEnvJSON{Environment: name, diagnosticsJSON: splitDiagnostics(ds)})
			continue
		}
		ds := r.Diagnostics()
		all = append(all, ds...)
		ej := validateEnvJSON{Environment: name, Assignments: len(r.Schedule.Assignments),
			Rendered: len(r.Output.Assignments) - len(r.Output.Failed()), diagnosticsJSON: splitDiagnostics(ds)}
		doc.Valid = doc.Valid && len(ej.Errors) == 0
		doc.Environments = append(doc.Environments, ej)
	}
	all = dedupe(all)
	if controlplane.HasErrors(all) {
		doc.Valid = false
	}
	printDiagnostics(e.Stderr, all)
	err = o.out.Write(e.Stdout, doc, func(w io.Writer) error {
		t := command.NewTable(w, "ENVIRONMENT", "ASSIGNMENTS", "RENDERED", "ERRORS", "WARNINGS")
		for _, ej := range doc.Environments {
			t.Row(ej.Environment, fmt.Sprint(ej.Assignments), fmt.Sprint(ej.Rendered), fmt.Sprint(len(ej.Errors)), fmt.Sprint(len(ej.Warnings)))
		}
		return t.Flush()
	})
	if err != nil {
		return failed(ExitFailed, err)
	}
	if !doc.Valid {
		return failed(ExitFailed, nil)
	}
	return nil
}
