package compose_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/golden"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestGoldenComposition composes every (cluster type, deployment target) pair of Kalypso's
// sample and of the project's example control plane, and compares every value and its
// provenance with testdata/golden/.
func TestGoldenComposition(t *testing.T) {
	k := gittest.NewKalypso(t)
	cases := []struct {
		name, location, env string
		opts                controlplane.Options
	}{
		{"kalypso-dev", k.ControlPlane.Dir, "dev", controlplane.Options{RepoMap: k.RepoMap}},
		{"example-dev", filepath.Join("..", "..", "examples", "platform"), "dev", exampleOptions()},
		{"example-prod", filepath.Join("..", "..", "examples", "platform"), "prod", exampleOptions()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp, err := controlplane.Open(t.Context(), tc.location, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := cp.Load(t.Context(), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if controlplane.HasErrors(snap.Diagnostics) {
				t.Fatalf("diagnostics: %v", snap.Diagnostics)
			}
			c := compose.New(snap)
			got := map[string]map[string]*compose.Value{}
			for _, ct := range snap.ClusterTypes {
				for _, dt := range snap.DeploymentTargets {
					if dt.Environment == tc.env {
						got[ct.Metadata.Name+"/"+dt.Name] = c.Compose(ct, dt).Values
					}
				}
			}
			golden.JSON(t, filepath.Join("testdata", "golden", tc.name+".json"), got, *updateGolden)
		})
	}
}

func exampleOptions() controlplane.Options {
	base := filepath.Join("..", "..", "examples")
	return controlplane.Options{RepoMap: controlplane.RepoMap{
		"https://github.com/example-org/payments-workloads": filepath.Join(base, "apps", "payments"),
		"https://github.com/example-org/factory-workloads":  filepath.Join(base, "apps", "factory"),
	}}
}
