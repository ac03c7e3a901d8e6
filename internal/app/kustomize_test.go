package app_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

const kustomizeWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: web
spec:
  deploymentTargets:
    - name: edge
      environment: dev
      manifests: {repo: https://example.com/gitops, branch: dev, path: edge}
`

func TestKustomizeBase(t *testing.T) {
	src := gittest.New(t)
	src.Commit(t, "main", map[string]string{
		"workload.yaml":      kustomizeWorkload,
		"fleetform-app.yaml": "kustomize: deploy/base\n",
		"deploy/base/kustomization.yaml": "resources: [deployment.yaml]\nimages:\n  - name: web\n    newName: ghcr.io/example/web\n    newTag: $IMAGE_TAG\n" +
			"labels:\n  - pairs: {app: web}\n",
		"deploy/base/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n" +
			"      containers:\n        - name: web\n          image: web\n          args: [\"--home=$HOME\"]\n",
	})
	cfgRepo := gittest.New(t)
	cfgRepo.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "logging:\n  level: Info\nfeatures: [a, b]\n"})
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	run := newRun(t, a, openRepo(t, repos, cfgRepo.Dir), "dev", "main", nil, "2.0.0")
	folder, err := run.Render(t.Context(), run.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	files := folder.Files
	d := string(files["deployment-web.yaml"])
	for _, s := range []string{"image: ghcr.io/example/web:2.0.0", "app: web", "--home=$HOME"} {
		if !strings.Contains(d, s) {
			t.Errorf("deployment lacks %q:\n%s", s, d)
		}
	}
	cm := string(files["configmap-web-values.yaml"])
	for _, s := range []string{"logging.level: Info", "features: |-\n    - a\n    - b"} {
		if !strings.Contains(cm, s) {
			t.Errorf("values config map lacks %q:\n%s", s, cm)
		}
	}
	if !strings.Contains(string(files["kustomization.yaml"]), "- deployment-web.yaml\n- configmap-web-values.yaml\n") {
		t.Errorf("kustomization.yaml:\n%s", files["kustomization.yaml"])
	}
}

// TestKustomizeNumericTag: an image tag that looks like a number is still a tag (kustomize
// refuses a number in newTag).
func TestKustomizeNumericTag(t *testing.T) {
	src := gittest.New(t)
	src.Commit(t, "main", map[string]string{
		"workload.yaml":             kustomizeWorkload,
		"fleetform-app.yaml":        "kustomize: deploy\n",
		"deploy/kustomization.yaml": "resources: [deployment.yaml]\nimages:\n  - name: web\n    newTag: $IMAGE_TAG\n",
		"deploy/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n" +
			"      containers:\n        - name: web\n          image: web\n",
	})
	cfgRepo := gittest.New(t)
	cfgRepo.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "a: b\n"})
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	run := newRun(t, a, openRepo(t, repos, cfgRepo.Dir), "dev", "main", nil, "20261129")
	folder, err := run.Render(t.Context(), run.Targets[0])
	if err != nil {
		t.Fatal(err)
	}
	if d := string(folder.Files["deployment-web.yaml"]); !strings.Contains(d, "image: web:20261129") {
		t.Errorf("deployment:\n%s", d)
	}
}

// TestKustomizeVarChangeRenders: a kustomize build substitutes the variables, so a new
// --var value alone (the image's name) renders the targets again: apply does not say "no
// change" and keep the old image.
func TestKustomizeVarChangeRenders(t *testing.T) {
	src := gittest.New(t)
	src.Commit(t, "main", map[string]string{
		"workload.yaml":             kustomizeWorkload,
		"fleetform-app.yaml":        "kustomize: deploy\nvariables: [IMAGE_NAME]\n",
		"deploy/kustomization.yaml": "resources: [deployment.yaml]\nimages:\n  - name: web\n    newName: $IMAGE_NAME\n    newTag: $IMAGE_TAG\n",
		"deploy/deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n" +
			"      containers:\n        - name: web\n          image: web\n",
	})
	cfgRepo := gittest.New(t)
	cfgRepo.Commit(t, "main", map[string]string{"dev/edge/values.yaml": "a: b\n"})
	gitops := gittest.NewBare(t)
	w := &app.Writer{Repo: openGitOps(t, gitops.Dir), Author: object.Signature{Name: "test", Email: "test@example.com"}, Logger: slog.New(slog.DiscardHandler)}
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	for _, image := range []string{"ghcr.io/old/web", "ghcr.io/new/web"} {
		run := newRun(t, a, openRepo(t, repos, cfgRepo.Dir), "dev", "main", map[string]string{"IMAGE_NAME": image}, "1.0.0")
		res := apply(t, w, run)
		if res.NoChange || res.Targets[0].Status != app.StatusChanged {
			t.Errorf("IMAGE_NAME=%s: %+v", image, res.Targets[0])
		}
		if d := gitops.Files(t, "dev")["edge/deployment-web.yaml"]; !strings.Contains(d, "image: "+image+":1.0.0") {
			t.Errorf("IMAGE_NAME=%s: deployment:\n%s", image, d)
		}
	}
}
