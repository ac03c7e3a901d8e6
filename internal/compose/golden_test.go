package compose_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/gittest"
	"github.com/fleetform/fleetform/internal/platform"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// TestGoldenComposition composes every (cluster type, deployment target) pair of Kalypso's
// sample and of the project's example control plane, and compares every value and its
// provenance with testdata/golden/.
func TestGoldenComposition(t *testing.T) {
	k := gittest.NewKalypso(t)
	cases := []struct {
		name, location, env string
		opts                platform.Options
	}{
		{"kalypso-dev", k.ControlPlane.Dir, "dev", platform.Options{RepoMap: k.RepoMap}},
		{"example-dev", filepath.Join("..", "..", "examples", "platform"), "dev", exampleOptions()},
		{"example-prod", filepath.Join("..", "..", "examples", "platform"), "prod", exampleOptions()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cp, err := platform.Open(t.Context(), tc.location, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := cp.Load(t.Context(), tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if platform.HasErrors(snap.Diagnostics) {
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
			assertGoldenJSON(t, filepath.Join("testdata", "golden", tc.name+".json"), got)
		})
	}
}

func exampleOptions() platform.Options {
	base := filepath.Join("..", "..", "examples")
	return platform.Options{RepoMap: platform.RepoMap{
		"https://github.com/example-org/payments-workloads": filepath.Join(base, "apps", "payments"),
		"https://github.com/example-org/factory-workloads":  filepath.Join(base, "apps", "factory"),
	}}
}

func assertGoldenJSON(t *testing.T, path string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got); run go test -update if intended:\n%s", path, diff)
	}
}
