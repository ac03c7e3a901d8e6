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
	r, err := Scheduled(ctx, cp, env)
	if err != nil || upTo < UpToRender {
		return r, err
	}
	opts.Stop = ctx.Done()
	env = r.Snapshot.Environment
	cp.Logger().DebugContext(ctx, "rendering", "environment", env, "assignments", len(r.Schedule.Assignments))
	r.Output = render.Render(r.Snapshot, r.Schedule, opts)
	if r.Output.Stopped {
		return nil, &EnvError{Env: env, Err: ctx.Err()}
	}
	return r, nil
}

// Scheduled loads env and schedules it: Load up to UpToSchedule, what every writer of the
// environment starts from (the GitOps writer renders what it needs itself). Env "" is the
// only environment declared: controlplane.ErrNoEnvironment or a
// controlplane.SeveralEnvironmentsError when there is not exactly one.
func Scheduled(ctx context.Context, cp *controlplane.ControlPlane, env string) (*Run, error) {
	if env == "" {
		only, err := cp.OnlyEnvironment(ctx)
		if err != nil {
			return nil, err // no environment was chosen: the error is the choice's
		}
		env = only
	}
	snap, err := cp.Load(ctx, env)
	if err != nil {
		return nil, &EnvError{Env: env, Err: err}
	}
	return &Run{ControlPlane: cp, Snapshot: snap, Schedule: schedule.Schedule(snap)}, nil
}

// LoadKnowing is Load up to UpToRender for checking env, rendering only what is not known
// to render: an assignment whose input digest known holds (one that rendered without error
// before: equal digests mean byte-identical files) is not rendered again, and keeps Files
// nil without an error; the others are rendered. The diagnostics are Load's. known is
// called from several goroutines; nil renders everything.
func LoadKnowing(ctx context.Context, cp *controlplane.ControlPlane, env string, opts render.Options, known func(digest string) bool) (*Run, error) {
	if known == nil {
		return Load(ctx, cp, env, UpToRender, opts)
	}
	r, err := Scheduled(ctx, cp, env)
	if err != nil {
		return nil, err
	}
	opts.Stop = ctx.Done()
	rr := render.NewRenderer(r.Snapshot, r.Schedule, opts)
	rr.Prepare()
	cp.Logger().DebugContext(ctx, "rendering what is not known to render", "environment", env, "assignments", len(r.Schedule.Assignments))
	r.Output = rr.Render(func(a *render.Assignment) bool { return !known(a.InputDigest) })
	if r.Output.Stopped {
		return nil, &EnvError{Env: env, Err: ctx.Err()}
	}
	return r, nil
}

// AddRendered adds to set the input digests of the assignments of r that rendered, or are
// known to render, without error.
func (r *Run) AddRendered(set map[string]bool) {
	if r.Output == nil {
		return
	}
	for i := range r.Output.Assignments {
		if a := &r.Output.Assignments[i]; a.Err == nil && a.InputDigest != "" {
			set[a.InputDigest] = true
		}
	}
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
