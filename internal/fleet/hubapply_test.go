package fleet_test

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// twoTypes is a control plane of dev with cluster types west and east (east's namespaces
// from template ns, whose manifest is nsManifest) and workload shop with target web.
func twoTypes(nsManifest string) map[string]string {
	return map[string]string{
		"environments/dev/env.yaml": environment("dev", ""),
		"environments/dev/types.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: west}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: east}
spec: {reconciler: builtin/flux, namespaceService: ns, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`,
		"ns.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Template\nmetadata: {name: ns}\nspec:\n  type: namespace\n  manifests:\n    - |\n      " + nsManifest + "\n",
		"shop.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop}
spec:
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/shop, branch: main, path: ./web}}
`,
	}
}

// TestFailedAssignmentWithoutChangeIsItsError: when an assignment fails and nothing changed
// (its folder is kept, the GitOps branch does not move), apply --hub's outcome is the
// assignment's error; the hub's refusal of a desired state that differs from the one
// recorded for the unchanged revision is expected (this apply cannot say what the failed
// assignment configures), neither reported nor logged, and the record stands.
func TestFailedAssignmentWithoutChangeIsItsError(t *testing.T) {
	ctx := t.Context()
	h := storetest.RunningHub(t, hub.Options{})
	cp, gitops := gittest.NewBare(t), gittest.NewBare(t)
	f := fleet.New(fleet.Config{ControlPlane: cp.Dir, CacheDir: t.TempDir(), Hub: fleet.LocalHub(h)})
	apply := func() (*fleet.ApplyResult, error) {
		return f.Apply(ctx, fleet.ApplyRequest{Env: "dev", GitOps: gitops.Dir, Branch: "dev"})
	}

	cp.Commit(t, "main", twoTypes("{apiVersion: v1, kind: Namespace, metadata: {name: {{ .Namespace }}}}"))
	first, err := apply()
	if err != nil || first.Commit == "" {
		t.Fatalf("first apply: %+v, %v", first, err)
	}
	cp.Commit(t, "main", twoTypes(`{{ fail "east's namespace is broken" }}`))
	// Applied once without the hub: a commit of the record of its inputs only (east's folder
	// is kept). The hub holds another desired state for that commit (as a replica that
	// rendered east there would have posted).
	noHub := fleet.New(fleet.Config{ControlPlane: cp.Dir, CacheDir: t.TempDir()})
	broken, err := noHub.Apply(ctx, fleet.ApplyRequest{Env: "dev", GitOps: gitops.Dir, Branch: "dev"})
	var invalid *fleet.InvalidError
	if !errors.As(err, &invalid) || broken == nil || broken.Commit == "" || broken.Commit == first.Commit {
		t.Fatalf("apply with east's assignment failing: %+v, %v; want an InvalidError and a commit", broken, err)
	}
	if err := h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: broken.Commit, Branch: "dev", GitOpsRepo: gitops.Dir,
		Assignments: []hub.DesiredAssignment{}}); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	f = fleet.New(fleet.Config{ControlPlane: cp.Dir, CacheDir: t.TempDir(), Hub: fleet.LocalHub(h),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	res, err := apply()
	if !errors.As(err, &invalid) || res == nil || !res.NoChange {
		t.Fatalf("apply again: %+v, %v; want an InvalidError and no change", res, err)
	}
	if strings.Contains(err.Error(), "conflict") || strings.Contains(logs.String(), "refused") {
		t.Errorf("apply reports the hub, not the assignment: %v\n%s", err, logs.String())
	}
	if msg := fmt.Sprint(res.Plan.Errors); !strings.Contains(msg, "east's namespace is broken") {
		t.Errorf("plan errors %q lack the assignment's error", msg)
	}
}
