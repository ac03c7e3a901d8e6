package authoring

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// apiWorkload is Workload api with one deployment target, web in dev.
var apiWorkload = strings.SplitAfter(twoWebs, "path: ./dev}\n")[0]

// TestObjectsLeftOutAreNotEdited: a file the control plane does not read (listed in a
// .sourceignore, or left out by Flux's default exclusions) is neither searched for the object
// a change names nor written for a new one: the object there is not defined, and the error
// says where the copy that is not read is.
func TestObjectsLeftOutAreNotEdited(t *testing.T) {
	setAPI := Operation{Op: OpSet, Kind: v1alpha1.KindWorkload, Name: "api", Labels: map[string]string{"tier": "gold"}}
	envWide := func(key, value string) Operation {
		return Operation{Op: OpSet, Kind: v1alpha1.KindConfigMap, Env: "dev", Scope: &ConfigScope{EnvironmentWide: true},
			Data: map[string]any{key: value}}
	}

	// The only copy is in a folder .sourceignore lists.
	archived := map[string]string{".sourceignore": "# old copies\narchive/\n", "archive/api-2024.yaml": "# retired\n" + apiWorkload}
	dir := controlPlane(t, archived)
	notRead := `Workload "api" is not defined in the common content: archive/api-2024.yaml:2 defines it, but the control plane does not read that file`
	checkRefused(t, dir, archived, Remove(v1alpha1.KindWorkload, "api", "", ""), notRead, "add the object to have it read")
	checkRefused(t, dir, archived, setAPI, notRead)
	checkRefused(t, dir, archived, Remove(KindDeploymentTarget, "api-web", "", ""), `no deployment target "api-web"`)

	// Beside the live copy, the old one is not a second definition: the live one is changed.
	live := map[string]string{".sourceignore": "archive/\n", "archive/api-2024.yaml": apiWorkload, "workloads/api.yaml": apiWorkload}
	dir = controlPlane(t, live)
	checkDiff(t, dir, Remove(v1alpha1.KindWorkload, "api", "", ""), "workloads/api.yaml", "-kind: Workload")
	checkDiff(t, dir, Remove(KindDeploymentTarget, "api-web", "", ""), "workloads/api.yaml", "-      environment: dev")

	// Flux's default exclusions (.github/) are not read either.
	github := map[string]string{".github/api.yaml": apiWorkload}
	checkRefused(t, controlPlane(t, github), github, setAPI,
		`Workload "api" is not defined in the common content: .github/api.yaml:1 defines it, but the control plane does not read that file`)

	// A .sourceignore of the environment's folder: the config values it leaves out are not
	// the environment's, and are written anew where they are read.
	oldConfig := map[string]string{
		"environments/dev/.sourceignore": "old/\n",
		"environments/dev/config/old/environment.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: environment\n" +
			"  labels: {platform-config: \"true\"}\ndata: {REGION: east}\n",
	}
	checkDiff(t, controlPlane(t, oldConfig), envWide("REGION", "west"), "environments/dev/config/environment.yaml", "+  REGION: west")

	// A new object is not written where it would not be read.
	ignored := map[string]string{".sourceignore": "workloads/\n", "environments/dev/.sourceignore": "config/\n"}
	dir = controlPlane(t, ignored)
	checkRefused(t, dir, ignored, Operation{Op: OpAdd, Kind: v1alpha1.KindWorkload, Name: "api", Spec: map[string]any{}},
		"workloads/api.yaml: Workload/api: is where a new Workload is written, and the control plane does not read that file",
		"change .sourceignore so that it does not list workloads/api.yaml")
	checkRefused(t, dir, ignored, envWide("REGION", "west"),
		"environments/dev/config/environment.yaml: ConfigMap/environment: is where a new ConfigMap is written, and the control plane does not read that file")
}

// TestKalypsoObjectsLeftOutAreNotEdited: in the Kalypso layout an environment branch's
// .sourceignore applies to its objects, and main's .sourceignore listing .environments/ (as
// Kalypso's own does) does not hide the Environments, which the loader reads there anyway.
func TestKalypsoObjectsLeftOutAreNotEdited(t *testing.T) {
	repo := gittest.NewBare(t)
	env := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata:\n  name: dev\n" +
		"spec:\n  controlPlane: {repo: \"\", branch: dev, path: .}\n"
	repo.Commit(t, "main", map[string]string{".sourceignore": ".environments/\n", ".environments/dev.yaml": env, "workloads/api.yaml": apiWorkload})
	repo.Commit(t, "dev", map[string]string{".sourceignore": "old/\n", "old/edge.yaml": edgeDoc, "base-repo.yaml": baseRepoDoc})

	res, err := Apply(t.Context(), Request{ControlPlane: repo.Dir, Mode: ModeDryRun,
		Operations: []Operation{{Op: OpSet, Kind: v1alpha1.KindEnvironment, Name: "dev", Labels: map[string]string{"tier": "gold"}}}})
	if err != nil || len(res.Files) != 1 || res.Files[0].Branch != "main" || res.Files[0].Path != ".environments/dev.yaml" {
		t.Fatalf("set environment dev: %v, %+v; want a change of main:.environments/dev.yaml", err, res)
	}
	res, err = Apply(t.Context(), Request{ControlPlane: repo.Dir, Mode: ModeDryRun,
		Operations: []Operation{Remove(v1alpha1.KindClusterType, "edge", "dev", "")}})
	want := `ClusterType "edge" is not defined in environment dev: dev:old/edge.yaml:1 defines it, but the control plane does not read that file`
	if err == nil || res == nil || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Message, want) {
		t.Fatalf("remove cluster-type edge: %v, %+v; want it refused: %s", err, res, want)
	}
}
