package fleet

import (
	"context"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// Planned is a plan's report (the contract of `plan -o json`) and every diagnostic met on
// the way, in the order met.
type Planned struct {
	pipeline.PlanReport
	Diagnostics []controlplane.Diagnostic `json:"-"`
}

// PlanRequest is a plan of one environment.
type PlanRequest struct {
	// Env is the environment ("": the only one there is).
	Env string
	// GitOps, Branch and Path override where the environment is written (Fleet.Target).
	GitOps, Branch, Path string
	Write                WriteOptions
}

// Plan renders env (only what changed since its branch was last written) and compares it
// with its GitOps branch, writing nothing. Errors in the input are an InvalidError along
// with the plan.
func (f *Fleet) Plan(ctx context.Context, req PlanRequest) (*Planned, error) {
	r, err := f.Load(ctx, req.Env, pipeline.UpToSchedule)
	if err != nil {
		return nil, err
	}
	t, err := f.Target(r, gitops.Target{Repo: req.GitOps, Branch: req.Branch, Path: req.Path})
	if err != nil {
		return nil, err
	}
	p, err := f.writer(req.Write).Plan(ctx, pipeline.Input(r, t))
	if err != nil {
		return nil, err
	}
	doc := &Planned{PlanReport: pipeline.Report(p, r, req.Write.Diff), Diagnostics: r.DiagnosticsWith(p.Output)}
	return doc, invalid(doc.Diagnostics)
}
