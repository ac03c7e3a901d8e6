package fleet_test

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

const teamsPolicy = `apiVersion: fleetform.io/v1alpha1
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: payments
      subjects: [{group: payments-devs}]
      allow: [{action: author, workspaces: [payments]}]
`

// TestAuthorIsJudgedByWhatItTouches: a team member may change their workspace's objects and
// nothing else; a refused change writes nothing; a request without an identity (the
// command line's) is not judged.
func TestAuthorIsJudgedByWhatItTouches(t *testing.T) {
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{"environments/dev/env.yaml": environment("dev", ""), "access/teams.yaml": teamsPolicy})
	cp, err := controlplane.Open(t.Context(), r.Dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	policies, _, err := cp.AccessPolicies(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	rights := access.NewRights()
	rights.SetTip(fleet.Policy(policies))
	f := fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir(), Rights: rights})
	dev := access.Identity{Issuer: "https://idp", Subject: "u1", Email: "pay@contoso.com", Groups: []string{"payments-devs"}}
	workload := func(name, workspace string) authoring.Operation {
		return authoring.Operation{Op: "add", Kind: "Workload", Name: name, Labels: map[string]string{"workspace": workspace},
			Spec: map[string]any{"deploymentTargets": []any{map[string]any{"name": "dev", "environment": "dev",
				"manifests": map[string]any{"repo": "https://example.com/app", "branch": "main", "path": "."}}}}}
	}
	clusterType := authoring.Operation{Op: "add", Kind: "ClusterType", Name: "large", Env: "dev",
		Spec: map[string]any{"reconciler": "builtin/flux", "namespaceService": "builtin/namespace"}}

	res, err := f.Author(t.Context(), fleet.AuthorRequest{Operations: []authoring.Operation{workload("pay", "payments")},
		Mode: authoring.ModeCommit, Identity: &dev})
	if err != nil || !res.Written || len(res.Scope.Workspaces) != 1 || res.Scope.Workspaces[0] != "payments" || res.Scope.Platform {
		t.Fatalf("the team's own workload: %+v, %v", res, err)
	}
	tip := r.Tip(t, "main")
	for name, ops := range map[string][]authoring.Operation{
		"another team's workload": {workload("bill", "billing")},
		"a platform object":       {clusterType},
		"both, in one change":     {workload("pay2", "payments"), clusterType},
	} {
		res, err := f.Author(t.Context(), fleet.AuthorRequest{Operations: ops, Mode: authoring.ModeCommit, Identity: &dev})
		if !fleet.IsForbidden(err) || res == nil || res.Written {
			t.Errorf("%s: %+v, %v; want a ForbiddenError and nothing written", name, res, err)
		}
		if got := r.Tip(t, "main"); got != tip {
			t.Errorf("%s: the branch moved to %s", name, got)
		}
	}
	if _, err := f.Author(t.Context(), fleet.AuthorRequest{Operations: []authoring.Operation{clusterType}, Mode: authoring.ModeCommit}); err != nil {
		t.Errorf("a change without an identity (the command line's): %v", err)
	}
}

// TestPromotionsAskTheHubFirst: a command line promoting with a hub token the hub's policies
// do not allow is refused before it reads or writes anything, with the hub's reason.
func TestPromotionsAskTheHubFirst(t *testing.T) {
	ctx := t.Context()
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	h := hub.New(store, hub.Options{})
	_, viewer, err := h.CreateToken(ctx, hub.TokenRead, "viewer", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	rights := access.NewRights()
	rights.SetTip(access.Compile([]*v1alpha1.AccessPolicy{{}}))
	rights.SetEnvironment("dev", access.Compile([]*v1alpha1.AccessPolicy{{}}))
	srv := httptest.NewServer(api.New(h, api.Options{Rights: rights}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, viewer, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{"environments/dev/env.yaml": environment("dev", "")})
	f := fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir(), Hub: fleet.RemoteHub(c)})
	tip := r.Tip(t, "main")
	_, err = f.Promote(ctx, fleet.PromoteRequest{To: "dev", Now: time.Now()})
	if !fleet.IsForbidden(err) || !strings.Contains(err.Error(), "token viewer may not promote") {
		t.Fatalf("promote with a read-only token: %v, want the hub's refusal", err)
	}
	if r.Tip(t, "main") != tip {
		t.Fatal("a refused promotion moved the control plane")
	}
}
