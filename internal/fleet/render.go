package fleet

import (
	"context"
	"io"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Rendering is what Render did: the contract of `render -o json`.
type Rendering struct {
	Environment  string             `json:"environment"`
	Out          string             `json:"out"`
	Assignments  int                `json:"assignments"`
	ClusterTypes int                `json:"clusterTypes"`
	Written      []string           `json:"written"`
	Unchanged    int                `json:"unchanged"`
	Removed      []string           `json:"removed"`
	Failed       []FailedAssignment `json:"failed"`
	controlplane.DiagnosticReport
	// Run is the environment as rendered.
	Run *pipeline.Run `json:"-"`
}

// FailedAssignment is an assignment that did not render: it keeps its previous files.
type FailedAssignment struct {
	ClusterType      string `json:"clusterType"`
	DeploymentTarget string `json:"deploymentTarget"`
	Error            string `json:"error"`
}

// Scheduling is an environment's assignments: the contract of `schedule -o json`. They are
// sorted by cluster type, then deployment target.
type Scheduling struct {
	Environment string                `json:"environment"`
	Assignments []ScheduledAssignment `json:"assignments"`
	controlplane.DiagnosticReport
	// Diagnostics are every problem met, in the order met.
	Diagnostics []controlplane.Diagnostic `json:"-"`
}

// ScheduledAssignment is a deployment target on a cluster type, with the policies that
// put it there.
type ScheduledAssignment struct {
	Workload         string   `json:"workload"`
	DeploymentTarget string   `json:"deploymentTarget"`
	ClusterType      string   `json:"clusterType"`
	Namespace        string   `json:"namespace"`
	Policies         []string `json:"policies"`
	// Pinned, when set, is the pin of the environment that holds the assignment's manifests.
	Pinned *schedule.Pinned `json:"pinned,omitempty"`
}

// Schedule loads env (or the only environment) and schedules it. Errors in the input are an
// InvalidError along with the Scheduling, which says which. An environment that cannot be
// read is a pipeline.EnvError, along with a Scheduling of no assignment that says why.
func (f *Fleet) Schedule(ctx context.Context, env string) (*Scheduling, error) {
	r, err := f.Load(ctx, env, pipeline.UpToSchedule)
	if err != nil {
		if name := pipeline.ErrorEnvironment(err); name != "" {
			ds := pipeline.ErrorDiagnostics(err)
			return &Scheduling{Environment: name, Assignments: []ScheduledAssignment{}, DiagnosticReport: controlplane.SplitDiagnostics(ds)}, err
		}
		return nil, err
	}
	ds := r.Diagnostics()
	doc := &Scheduling{Environment: r.Snapshot.Environment, Assignments: []ScheduledAssignment{},
		DiagnosticReport: controlplane.SplitDiagnostics(ds), Diagnostics: ds}
	for _, a := range r.Schedule.Assignments {
		doc.Assignments = append(doc.Assignments, ScheduledAssignment{Workload: a.Workload, DeploymentTarget: a.DeploymentTarget,
			ClusterType: a.ClusterType, Namespace: a.Namespace, Policies: a.Policies, Pinned: a.Pinned})
	}
	return doc, invalid(ds)
}

// Render renders env (or the only environment) into the folder out, which stands for the
// GitOps path (pipeline.RenderToDir; what stands in the way is printed to problems). Errors in the
// input are an InvalidError along with the Rendering: what rendered is written regardless.
func (f *Fleet) Render(ctx context.Context, env, out string, problems io.Writer) (*Rendering, error) {
	r, err := f.Load(ctx, env, pipeline.UpToRender)
	if err != nil {
		return nil, err
	}
	ds := r.Diagnostics()
	doc := &Rendering{Environment: r.Snapshot.Environment, Out: out, Assignments: len(r.Output.Assignments),
		ClusterTypes: len(r.Output.ClusterTypes), Failed: []FailedAssignment{}, DiagnosticReport: controlplane.SplitDiagnostics(ds), Run: r}
	for _, a := range r.Output.Failed() {
		doc.Failed = append(doc.Failed, FailedAssignment{ClusterType: a.ClusterType, DeploymentTarget: a.DeploymentTarget, Error: a.Err.Error()})
	}
	res, err := pipeline.RenderToDir(r, out, problems)
	if err != nil {
		return nil, err
	}
	doc.Written, doc.Unchanged, doc.Removed = orEmpty(res.Written), res.Unchanged, orEmpty(res.Removed)
	return doc, invalid(ds)
}

// Explain loads env and explains a deployment target on a cluster type (pipeline.Run.Explain).
func (f *Fleet) Explain(ctx context.Context, env, clusterType, target, key string) (*pipeline.Explanation, error) {
	r, err := f.Load(ctx, env, pipeline.UpToSchedule)
	if err != nil {
		return nil, err
	}
	return r.Explain(clusterType, target, key)
}

// TargetPlaces loads env and explains where a deployment target could go (pipeline.Run.TargetPlaces).
func (f *Fleet) TargetPlaces(ctx context.Context, env, target string) (*pipeline.TargetPlaces, error) {
	r, err := f.Load(ctx, env, pipeline.UpToSchedule)
	if err != nil {
		return nil, err
	}
	return r.TargetPlaces(target)
}

// ClusterTypePlaces loads env and explains which deployment targets a cluster type could
// take (pipeline.Run.ClusterTypePlaces).
func (f *Fleet) ClusterTypePlaces(ctx context.Context, env, clusterType string) (*pipeline.ClusterTypePlaces, error) {
	r, err := f.Load(ctx, env, pipeline.UpToSchedule)
	if err != nil {
		return nil, err
	}
	return r.ClusterTypePlaces(clusterType)
}

// orEmpty is s, or an empty list for none (a JSON [] rather than null).
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
