package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	usecases "github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/serve"
)

func TestOnboardClusterFormShowsManifestsWithoutAToken(t *testing.T) {
	f := newFleet(t)
	dir := filepath.Join(t.TempDir(), "platform")
	if _, err := authoring.Init(context.Background(), authoring.InitOptions{Dir: dir, Layout: controlplane.LayoutFolder,
		Environments: []string{"dev"}, GitOps: "https://github.com/org/platform-gitops",
		Author: object.Signature{Name: "test", Email: "test@localhost"}}); err != nil {
		t.Fatal(err)
	}
	changes := serve.NewControlPlaneChanges(serve.ChangesOptions{Fleet: usecases.New(usecases.Config{ControlPlane: dir})})
	if _, err := changes.Change(t.Context(), []authoring.Operation{authoring.AddClusterType("plant-lyon", "dev", nil, "", "", "")}, false, access.Identity{Token: "test", Admin: true}); err != nil {
		t.Fatal(err)
	}
	f.web.SetChanges(changes)
	c := client(t)
	f.signIn(t, c, adminToken)
	_, page, _ := f.get(t, c, "/author", "")
	status, body, _ := f.post(t, c, "/author/onboard-cluster", url.Values{"csrf": {csrfOf(t, page)}, "name": {"lyon-1"}, "env": {"dev"},
		"cluster_type": {"plant-lyon"}})
	if status != http.StatusOK {
		t.Fatalf("onboard: %d\n%s", status, body)
	}
	for _, want := range []string{"kind: GitRepository", "https://github.com/org/platform-gitops", "path: ./plant-lyon",
		"kind: Kustomization", "fleetform onboard cluster lyon-1 --env dev --cluster-type plant-lyon --hub http://"} {
		if !strings.Contains(body, want) {
			t.Errorf("the onboarding page lacks %q", want)
		}
	}
	if strings.Contains(body, "ff_") {
		t.Error("the onboarding page shows a token")
	}
	if clusters, err := f.hub.Clusters(t.Context(), "dev"); err != nil || len(clusters) != 6 {
		t.Fatalf("the page registered a cluster (or the fixture changed): %d clusters, %v", len(clusters), err)
	}
	status, body, _ = f.post(t, c, "/author/onboard-cluster", url.Values{"csrf": {csrfOf(t, page)}, "name": {"x"}, "env": {"dev"},
		"cluster_type": {"nowhere"}})
	if status != http.StatusBadRequest || !strings.Contains(body, "nowhere") {
		t.Fatalf("an unknown cluster type: %d\n%s", status, body)
	}
}
