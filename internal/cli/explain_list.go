package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/schedule"
)

// explainTargetJSON answers `explain --deployment-target DT` without --cluster-type: where
// could this deployment target go? Every cluster type of the environment, with the reason.
type explainTargetJSON struct {
	Environment      string             `json:"environment"`
	DeploymentTarget string             `json:"deploymentTarget"`
	ClusterTypes     []explainPlaceJSON `json:"clusterTypes"`
}

// explainTypeJSON answers `explain --cluster-type CT` without --deployment-target: every
// deployment target of the environment, on that cluster type or not, with the reason.
type explainTypeJSON struct {
	Environment       string             `json:"environment"`
	ClusterType       string             `json:"clusterType"`
	DeploymentTargets []explainPlaceJSON `json:"deploymentTargets"`
}

// explainPlaceJSON is one pair of a list: the other side's name and the decision.
type explainPlaceJSON struct {
	ClusterType      string               `json:"clusterType,omitempty"`
	DeploymentTarget string               `json:"deploymentTarget,omitempty"`
	Workload         string               `json:"workload,omitempty"`
	Scheduled        bool                 `json:"scheduled"`
	Namespace        string               `json:"namespace"`
	Scheduling       schedule.Explanation `json:"scheduling"`
}

// printTarget explains one deployment target against every cluster type.
func (o *explainOptions) printTarget(e *env, r *pipeline.Run) error {
	if problem := r.Schedule.CheckTarget(o.deploymentTarget); problem != "" {
		return failed(ExitFailed, errors.New(problem))
	}
	doc := explainTargetJSON{Environment: r.Snapshot.Environment, DeploymentTarget: o.deploymentTarget, ClusterTypes: []explainPlaceJSON{}}
	for _, ct := range r.Schedule.ClusterTypes {
		name := ct.Metadata.Name
		ex := r.Schedule.Explain(o.deploymentTarget, name)
		doc.ClusterTypes = append(doc.ClusterTypes, explainPlaceJSON{ClusterType: name, Scheduled: ex.Scheduled,
			Namespace: schedule.Namespace(r.Snapshot.Environment, name, o.deploymentTarget), Scheduling: ex})
	}
	return o.out.write(e.stdout, doc, func(w io.Writer) error {
		fmt.Fprintf(w, "%s in %s, on each cluster type:\n", doc.DeploymentTarget, doc.Environment)
		return placesText(w, doc.ClusterTypes, func(p explainPlaceJSON) string { return p.ClusterType })
	})
}

// printType explains every deployment target of the environment against one cluster type.
func (o *explainOptions) printType(e *env, r *pipeline.Run) error {
	if problem := r.Schedule.CheckClusterType(o.clusterType); problem != "" {
		return failed(ExitFailed, errors.New(problem))
	}
	doc := explainTypeJSON{Environment: r.Snapshot.Environment, ClusterType: o.clusterType, DeploymentTargets: []explainPlaceJSON{}}
	for _, dt := range r.Schedule.Targets {
		ex := r.Schedule.Explain(dt.Name, o.clusterType)
		doc.DeploymentTargets = append(doc.DeploymentTargets, explainPlaceJSON{DeploymentTarget: dt.Name, Workload: dt.Workload,
			Scheduled: ex.Scheduled, Namespace: schedule.Namespace(r.Snapshot.Environment, o.clusterType, dt.Name), Scheduling: ex})
	}
	return o.out.write(e.stdout, doc, func(w io.Writer) error {
		fmt.Fprintf(w, "deployment targets of %s on cluster type %s:\n", doc.Environment, doc.ClusterType)
		return placesText(w, doc.DeploymentTargets, func(p explainPlaceJSON) string { return p.DeploymentTarget })
	})
}

// placesText writes one line per pair, "  name  scheduled|not scheduled", then the
// reasons, one per line.
func placesText(w io.Writer, places []explainPlaceJSON, name func(explainPlaceJSON) string) error {
	if len(places) == 0 {
		_, err := fmt.Fprintln(w, "  (none)")
		return err
	}
	t := newTable(w, "  NAME", "SCHEDULED", "WHY")
	for _, p := range places {
		verdict := "no"
		if p.Scheduled {
			verdict = "yes"
		}
		why := whyLines(p.Scheduling)
		t.row("  "+name(p), verdict, why[0])
		for _, more := range why[1:] {
			t.row("", "", more)
		}
	}
	return t.flush()
}

// whyLines is a decision as sentences: the pair's own reasons, else each policy's verdict.
func whyLines(ex schedule.Explanation) []string {
	if len(ex.Reasons) > 0 {
		return ex.Reasons
	}
	var out []string
	for _, p := range ex.Policies {
		if ex.Scheduled && !p.Selected {
			continue // the policies that selected it say why it is there
		}
		out = append(out, fmt.Sprintf("policy %s: %s", p.Policy, strings.Join(p.Reasons, "; ")))
	}
	if len(out) == 0 {
		out = append(out, "")
	}
	return out
}
