package cli

import (
	"context"

	"github.com/fleetform/fleetform/internal/platform"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// result is the pipeline run for one environment.
type result struct {
	cp     *platform.ControlPlane
	snap   *platform.Snapshot
	sched  *schedule.Result
	output *render.Output // nil when only scheduling was asked for
}

// diagnostics gathers every stage's diagnostics.
func (r *result) diagnostics() []platform.Diagnostic {
	ds := append([]platform.Diagnostic(nil), r.snap.Diagnostics...)
	ds = append(ds, r.sched.Diagnostics...)
	if r.output != nil {
		ds = append(ds, r.output.Diagnostics...)
	}
	return ds
}

// diagnosticsWith gathers the load and scheduling diagnostics and those of a render
// made elsewhere (by plan or apply).
func (r *result) diagnosticsWith(out *render.Output) []platform.Diagnostic {
	ds := r.diagnostics()
	if out != nil && r.output == nil {
		ds = append(ds, out.Diagnostics...)
	}
	return ds
}

// stage says how far the pipeline runs.
type stage int

const (
	upToSchedule stage = iota
	upToRender
)

// runPipeline loads env and runs the pipeline up to the given stage.
func runPipeline(ctx context.Context, cp *platform.ControlPlane, env string, upTo stage, opts render.Options) (*result, error) {
	snap, err := cp.Load(ctx, env)
	if err != nil {
		return nil, failed(ExitFailed, &envError{env: env, err: err})
	}
	r := &result{cp: cp, snap: snap, sched: schedule.Schedule(snap)}
	if upTo >= upToRender {
		opts.Stop = ctx.Done()
		cp.Logger().DebugContext(ctx, "rendering", "environment", env, "assignments", len(r.sched.Assignments))
		r.output = render.Render(snap, r.sched, opts)
		if r.output.Stopped {
			return nil, failed(ExitFailed, &envError{env: env, err: ctx.Err()})
		}
	}
	return r, nil
}

func renderDefaults() render.Options { return render.Options{} }
