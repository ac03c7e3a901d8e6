package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// TestAppPromoteThroughHub promotes hello-world from dev to stage against a real hub (hub
// serve on SQLite): refused while the hub has no state for dev, refused during the soak,
// promoted once the gates pass; stage then runs dev's source commit and version, the hub
// has the versions, and its history records every decision.
func TestAppPromoteThroughHub(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	work := t.TempDir()
	r := newAppRepos(t, work)
	h := serveHub(t, filepath.Join(work, "hub.db"))
	gitops := []string{"--gitops", r.gitops.Dir, "--hub", h.url}
	fleetform(t, 0, append(r.args("apply", "--env", "dev", "--version", "1.4.2", "--image-tag", "1.4.2"), gitops...)...)
	devCommit := r.source.Tip(t, "main").String()
	promote := append(r.args("promote", "--from", "dev", "--to", "stage", "-o", "json"), gitops...)

	var doc struct {
		Promoted bool     `json:"promoted"`
		Commit   string   `json:"commit"`
		Version  string   `json:"version"`
		Reasons  []string `json:"reasons"`
	}
	decode := func(out string) {
		t.Helper()
		doc.Reasons = nil
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	decode(fleetform(t, cli.ExitRefused, promote...))
	if doc.Promoted || doc.Commit != devCommit || doc.Version != "1.4.2" ||
		strings.Join(doc.Reasons, "\n") != "dev: the hub has no desired state (fleetform apply --hub posts it)" {
		t.Fatalf("without the hub's state: %+v", doc)
	}

	// The platform scheduled hello-world's dev targets on cluster type small; one cluster
	// reports them Ready.
	ctx := t.Context()
	c, err := client.New(h.url, "admin-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	var assignments []hub.DesiredAssignment
	var deployments []hub.DeploymentReport
	for _, target := range []string{"functional-test", "performance-test"} {
		dt := "hello-world-" + target
		assignments = append(assignments, hub.DesiredAssignment{Workload: "hello-world", DeploymentTarget: dt, ClusterType: "small",
			Namespace: "dev-small-" + dt, Manifests: map[string]string{"repo": r.gitops.Dir, "branch": "dev", "path": target}})
		deployments = append(deployments, hub.DeploymentReport{DeploymentTarget: dt, Namespace: "dev-small-" + dt, Status: hub.Ready, Revision: "rev-1"})
	}
	if _, err := c.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "rev-1", GitOpsRepo: "platform-gitops", Branch: "dev", Assignments: assignments}); err != nil {
		t.Fatal(err)
	}
	tok, err := c.RegisterCluster(ctx, api.ClusterRegistration{Name: "dev-small-1", Environment: "dev", ClusterType: "small"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WithToken(tok.Token).Report(ctx, hub.Report{Cluster: "dev-small-1", Revision: "rev-1", Status: hub.Compliant,
		ObservedAt: time.Now().UTC(), Deployments: deployments}); err != nil {
		t.Fatal(err)
	}
	decode(fleetform(t, cli.ExitRefused, promote...))
	if len(doc.Reasons) != 1 || !strings.HasPrefix(doc.Reasons[0], "dev: unchanged and compliant for ") ||
		!strings.Contains(doc.Reasons[0], "of the 10m0s soak at revision rev-1") {
		t.Fatalf("during the soak: %+v", doc)
	}

	// The team drops the soak (a new source commit); dev still runs the first commit, which
	// is what reaches stage.
	r.sourceFiles["fleetform-app.yaml"] = "promotion:\n  stage:\n    from: dev\n    minCompliantPercent: 100\n"
	r.source.Commit(t, "main", r.sourceFiles)
	decode(fleetform(t, 0, promote...))
	if !doc.Promoted || doc.Commit != devCommit || len(doc.Reasons) != 0 {
		t.Fatalf("promotion: %+v", doc)
	}
	stage := r.gitops.Files(t, "stage")
	if stage["uat-test/.github/tracking/Promoted_Commit_Id"] != devCommit+"\n" || stage["uat-test/.github/tracking/Version"] != "1.4.2\n" ||
		!strings.Contains(stage["uat-test/deployment-hello-world.yaml"], "image: ghcr.io/example/hello-world:1.4.2") {
		t.Errorf("stage has %v", stage)
	}
	// Promoting again changes nothing.
	decode(fleetform(t, 0, promote...))

	mustContain(t, "history", fleetform(t, 0, "history", "--hub", h.url, "--kind", "promotion"),
		`promotion +stage .*dev -> stage +promoted hello-world 1.4.2 \(commit [0-9a-f]{7}\) from dev to stage`,
		`promotion +stage .*refused: dev: the hub has no desired state`)
	mustContain(t, "status", fleetform(t, 0, "status", "--hub", h.url, "--env", "dev"),
		`(?m)^hello-world-performance-test on small: version 1.4.2 runs on 1 of 1 clusters$`)
	diff := fleetform(t, 0, "diff", "dev", "dev", "--hub", h.url, "-o", "json")
	mustContain(t, "versions", diff, `"hello-world-performance-test": "1.4.2"`)
}
