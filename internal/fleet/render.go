package fleet

import (
	"context"
	"io"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
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

// Schedule loads env (or the only environment) and schedules it. Errors in the input are an
// InvalidError along with the pipeline.Run, which says which.
func (f *Fleet) Schedule(ctx context.Context, env string) (*pipeline.Run, error) {
	r, err := f.Load(ctx, env, pipeline.UpToSchedule)
	if err != nil {
		return nil, err
	}
	return r, invalid(r.Diagnostics())
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
