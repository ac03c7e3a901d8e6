package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Stage says how far Load runs the pipeline.
type Stage int

// Stages.
const (
	// UpToSchedule loads and schedules.
	UpToSchedule Stage = iota
	// UpToRender also composes and renders every assignment.
	UpToRender
)

// Run is one environment loaded, scheduled and, up to UpToRender, rendered.
type Run struct {
	ControlPlane *controlplane.ControlPlane
	Snapshot     *controlplane.Snapshot
	Schedule     *schedule.Result
	// Output is nil when only scheduling was asked for.
	Output *render.Output
}

// EnvError is the failure of one environment as a whole: its content could not be read, or
// the work was stopped.
type EnvError struct {
	Env string
	Err error
}

func (e *EnvError) Error() string { return fmt.Sprintf("load environment %s: %v", e.Env, e.Err) }

// Unwrap returns the cause.
func (e *EnvError) Unwrap() error { return e.Err }

// ErrorDiagnostics are the diagnostics of a failure: located where err says where (a
// controlplane.Diagnostic, or several joined), else one error without a place. The environment
// of an EnvError is left out: ErrorEnvironment says it.
func ErrorDiagnostics(err error) []controlplane.Diagnostic {
	var ee *EnvError
	if errors.As(err, &ee) {
		err = ee.Err
	}
	return controlplane.AsDiagnostics(err)
}

// ErrorEnvironment is the environment of an EnvError in err ("" when there is none).
func ErrorEnvironment(err error) string {
	var ee *EnvError
	if errors.As(err, &ee) {
		return ee.Env
	}
	return ""
}

// Load loads env and runs the pipeline up to the given stage. Rendering stops when ctx
// ends (the run is then an error: its output would be incomplete).
func Load(ctx context.Context, cp *controlplane.ControlPlane, env string, upTo Stage, opts render.Options) (*Run, error) {
	snap, err := cp.Load(ctx, env)
	if err != nil {
		return nil, &EnvError{Env: env, Err: err}
	}
	r := &Run{ControlPlane: cp, Snapshot: snap, Schedule: schedule.Schedule(snap)}
	if upTo >= UpToRender {
		opts.Stop = ctx.Done()
		cp.Logger().DebugContext(ctx, "rendering", "environment", env, "assignments", len(r.Schedule.Assignments))
		r.Output = render.Render(snap, r.Schedule, opts)
		if r.Output.Stopped {
			return nil, &EnvError{Env: env, Err: ctx.Err()}
		}
	}
	return r, nil
}

// LoadReusing is Load up to UpToRender for env as changed since prev, a run of the same
// environment up to UpToRender: an assignment whose input digest is that of one prev
// rendered without error takes its files (equal digests mean byte-identical files, and
// what renders once renders again), the others are rendered. The run is Load's, its
// diagnostics included. A nil prev renders everything.
func LoadReusing(ctx context.Context, cp *controlplane.ControlPlane, env string, opts render.Options, prev *Run) (*Run, error) {
	if prev == nil || prev.Output == nil {
		return Load(ctx, cp, env, UpToRender, opts)
	}
	r, err := Load(ctx, cp, env, UpToSchedule, opts)
	if err != nil {
		return nil, err
	}
	rendered := renderedFiles(prev.Output)
	opts.Stop = ctx.Done()
	rr := render.NewRenderer(r.Snapshot, r.Schedule, opts)
	rr.Prepare()
	r.Output = rr.Render(func(a *render.Assignment) bool {
		if f, ok := rendered[a.InputDigest]; ok {
			a.Files = f
			return false
		}
		return true
	})
	cp.Logger().DebugContext(ctx, "rendered what changed", "environment", env, "assignments", len(r.Schedule.Assignments))
	if r.Output.Stopped {
		return nil, &EnvError{Env: env, Err: ctx.Err()}
	}
	return r, nil
}

// renderedFiles are the files of the assignments of out rendered without error, by input
// digest.
func renderedFiles(out *render.Output) map[string]*render.Files {
	m := make(map[string]*render.Files, len(out.Assignments))
	for i := range out.Assignments {
		if a := &out.Assignments[i]; a.Err == nil && a.Files != nil && a.InputDigest != "" {
			m[a.InputDigest] = a.Files
		}
	}
	return m
}

// Diagnostics gathers every stage's diagnostics.
func (r *Run) Diagnostics() []controlplane.Diagnostic {
	ds := append([]controlplane.Diagnostic(nil), r.Snapshot.Diagnostics...)
	ds = append(ds, r.Schedule.Diagnostics...)
	if r.Output != nil {
		ds = append(ds, r.Output.Diagnostics...)
	}
	return ds
}

// DiagnosticsWith gathers the load and scheduling diagnostics and those of a render made
// elsewhere (by plan or apply).
func (r *Run) DiagnosticsWith(out *render.Output) []controlplane.Diagnostic {
	ds := r.Diagnostics()
	if out != nil && r.Output == nil {
		ds = append(ds, out.Diagnostics...)
	}
	return ds
}

// HasInputErrors reports whether the environment's input has errors that may hide what it
// schedules (a broken file, an invalid policy): then nothing may be removed on their account.
func (r *Run) HasInputErrors() bool {
	return controlplane.HasErrors(r.Snapshot.Diagnostics) || len(r.Schedule.FailedPolicies) > 0
}
