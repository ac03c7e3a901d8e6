package fleet

import (
	"context"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/render"
)

// Validation is what validate found: the contract of `validate -o json`.
type Validation struct {
	Environments []EnvironmentValidation `json:"environments"`
	Valid        bool                    `json:"valid"`
	// Diagnostics are every problem found, each once (common content is read once per
	// environment), in the order found.
	Diagnostics []controlplane.Diagnostic `json:"-"`
}

// EnvironmentValidation is one environment's part of a Validation.
type EnvironmentValidation struct {
	Environment string `json:"environment"`
	Assignments int    `json:"assignments"`
	Rendered    int    `json:"rendered"`
	controlplane.DiagnosticReport
}

// invalid is an InvalidError when ds has errors, else nil.
func invalid(ds []controlplane.Diagnostic) error {
	n := 0
	for _, d := range ds {
		if d.Severity == controlplane.SeverityError {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return &InvalidError{Errors: n}
}

// Validate runs the whole pipeline (load, schedule, compose, render) for env, or for every
// environment and the promotion chain, writing nothing. An environment that cannot be read
// does not stop the others. Problems found are an InvalidError along with the Validation.
func (f *Fleet) Validate(ctx context.Context, env string) (*Validation, error) {
	cp, err := f.OpenControlPlane(ctx)
	if err != nil {
		return nil, err
	}
	envs, err := f.Environments(ctx, cp, env)
	if err != nil {
		return nil, err
	}
	v := &Validation{Environments: []EnvironmentValidation{}, Valid: true}
	var all []controlplane.Diagnostic
	if infos, envDiags, err := cp.Environments(ctx); err == nil && env == "" {
		_, chainDiags := promote.NewChain(infos)
		all = append(append(all, envDiags...), chainDiags...)
	}
	for _, name := range envs {
		r, err := pipeline.Load(ctx, cp, name, pipeline.UpToRender, render.Options{})
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			ds := pipeline.ErrorDiagnostics(err)
			all = append(all, ds...)
			v.Valid = false
			v.Environments = append(v.Environments, EnvironmentValidation{Environment: name, DiagnosticReport: controlplane.SplitDiagnostics(ds)})
			continue
		}
		ds := r.Diagnostics()
		all = append(all, ds...)
		ev := EnvironmentValidation{Environment: name, Assignments: len(r.Schedule.Assignments),
			Rendered: len(r.Output.Assignments) - len(r.Output.Failed()), DiagnosticReport: controlplane.SplitDiagnostics(ds)}
		v.Valid = v.Valid && len(ev.Errors) == 0
		v.Environments = append(v.Environments, ev)
	}
	v.Diagnostics = dedupe(all)
	if controlplane.HasErrors(v.Diagnostics) {
		v.Valid = false
	}
	return v, invalid(v.Diagnostics)
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
