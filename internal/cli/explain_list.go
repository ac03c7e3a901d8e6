package cli

import (
	"fmt"
	"io"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/pipeline"
)

// printTarget explains one deployment target against every cluster type.
// targetPlacesText prints where a deployment target could go.
func targetPlacesText(w io.Writer, doc *pipeline.TargetPlaces) error {
	fmt.Fprintf(w, "%s in %s, on each cluster type:\n", doc.DeploymentTarget, doc.Environment)
	return placesText(w, doc.ClusterTypes, func(p pipeline.Place) string { return p.ClusterType })
}

// clusterTypePlacesText prints which deployment targets a cluster type could take.
func clusterTypePlacesText(w io.Writer, doc *pipeline.ClusterTypePlaces) error {
	fmt.Fprintf(w, "deployment targets of %s on cluster type %s:\n", doc.Environment, doc.ClusterType)
	return placesText(w, doc.DeploymentTargets, func(p pipeline.Place) string { return p.DeploymentTarget })
}

func placesText(w io.Writer, places []pipeline.Place, name func(pipeline.Place) string) error {
	if len(places) == 0 {
		_, err := fmt.Fprintln(w, "  (none)")
		return err
	}
	t := command.NewTable(w, "  NAME", "SCHEDULED", "WHY")
	for _, p := range places {
		verdict := "no"
		if p.Scheduled {
			verdict = "yes"
		}
		why := pipeline.WhyLines(p.Scheduling)
		t.Row("  "+name(p), verdict, why[0])
		for _, more := range why[1:] {
			t.Row("", "", more)
		}
	}
	return t.Flush()
}
