package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

const policyTypes = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: west, labels: {region: west}}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`

const policyWorkload = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  configSchemas:
    - '{"type": "object", "required": ["DB_URL"]}'
  deploymentTargets:
    - {name: web, environment: dev, manifests: {repo: https://example.com/shop, branch: main, path: ./web}}
`

// writePolicyPlane writes a folder-layout control plane whose dev environment has the
// policy ("" for none) and whose config map has the data.
func writePolicyPlane(t *testing.T, dir, policy, data string) {
	t.Helper()
	env := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: dev}\nspec:\n  controlPlane: {repo: https://example.com/cp, branch: main, path: .}\n"
	if policy != "" {
		env += "  configSchemaPolicy: " + policy + "\n"
	}
	files := map[string]string{
		"environments/dev/environment.yaml": env,
		"environments/dev/types.yaml":       policyTypes,
		"environments/dev/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dev-config, labels: {platform-config: \"true\"}}\ndata: " +
			data + "\n",
		"shop.yaml": policyWorkload,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfigSchemaPolicyWarn: with configSchemaPolicy warn, an assignment whose platform
// config lacks a required key still gets its namespace and reconciler, is reported as
// waiting (naming the key) by validate, plan and apply, and keeps its last valid platform
// config when its config breaks the schema again; block (the default) fails it.
func TestConfigSchemaPolicyWarn(t *testing.T) {
	work := t.TempDir()
	cp, gitops := filepath.Join(work, "cp"), filepath.Join(work, "gitops.git")
	writePolicyPlane(t, cp, "warn", "{LOG_LEVEL: info}")
	t.Setenv("FLEETFORM_CACHE_DIR", t.TempDir())
	if _, err := gittest.InitRepo(gitops, true); err != nil {
		t.Fatal(err)
	}

	mustContain(t, "validate", fleetform(t, 0, "validate", "--control-plane", cp, "-o", "json"),
		`waiting for platform configuration.*DB_URL`)
	var plan struct {
		Waiting []struct {
			DeploymentTarget string   `json:"deploymentTarget"`
			Problems         []string `json:"problems"`
		} `json:"waiting"`
		Errors []any `json:"errors"`
	}
	out := fleetform(t, 0, "plan", "--control-plane", cp, "--env", "dev", "--gitops", gitops, "-o", "json")
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Waiting) != 1 || plan.Waiting[0].DeploymentTarget != "shop-web" || !strings.Contains(strings.Join(plan.Waiting[0].Problems, ";"), "DB_URL") ||
		len(plan.Errors) != 0 {
		t.Fatalf("plan: %s", out)
	}
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, filepath.Join(work, "hub.db"))
	fleetform(t, 0, "apply", "--control-plane", cp, "--env", "dev", "--gitops", gitops, "--hub", h.url)
	// The hub gets the waiting state with the desired state; the UI names the missing key.
	status, _, page := getPage(t, h.url+"/workloads/shop", "admin-secret")
	if !strings.Contains(page, "waiting for platform configuration") || !strings.Contains(page, "DB_URL") {
		t.Fatalf("the workload's page on the hub (%d) does not show the waiting state:\n%s", status, page)
	}
	files := gitOut(t, gitops, "ls-tree", "-r", "--name-only", "dev")
	if !strings.Contains(files, "west/shop-web/namespace.yaml") || !strings.Contains(files, "west/shop-web/reconciler.yaml") ||
		strings.Contains(files, "west/shop-web/platform-config.yaml") {
		t.Fatalf("a new waiting assignment: %s", files)
	}

	// The platform team provides DB_URL: the platform config is written.
	writePolicyPlane(t, cp, "warn", "{LOG_LEVEL: info, DB_URL: 'mysql://db'}")
	fleetform(t, 0, "apply", "--control-plane", cp, "--env", "dev", "--gitops", gitops)
	if got := gitOut(t, gitops, "show", "dev:west/shop-web/platform-config.yaml"); !strings.Contains(got, "DB_URL: mysql://db") {
		t.Fatalf("platform config:\n%s", got)
	}

	// It breaks again: the last valid platform config stays, the rest is updated.
	writePolicyPlane(t, cp, "warn", "{LOG_LEVEL: debug}")
	mustContain(t, "apply", fleetform(t, 0, "apply", "--control-plane", cp, "--env", "dev", "--gitops", gitops, "-o", "json"),
		`"waiting": \[`, `"deploymentTarget": "shop-web"`)
	if got := gitOut(t, gitops, "show", "dev:west/shop-web/platform-config.yaml"); !strings.Contains(got, "DB_URL: mysql://db") || strings.Contains(got, "debug") {
		t.Fatalf("the last valid platform config was not kept:\n%s", got)
	}

	// block (the default) fails the assignment; an unknown policy is an error.
	writePolicyPlane(t, filepath.Join(work, "block"), "", "{LOG_LEVEL: info}")
	fleetform(t, cli.ExitFailed, "validate", "--control-plane", filepath.Join(work, "block"))
	writePolicyPlane(t, filepath.Join(work, "typo"), "warning", "{LOG_LEVEL: info, DB_URL: x}")
	var stdout strings.Builder
	var stderr strings.Builder
	if code := cli.Main(t.Context(), []string{"validate", "--control-plane", filepath.Join(work, "typo")}, nil, &stdout, &stderr); code != cli.ExitFailed ||
		!strings.Contains(stdout.String()+stderr.String(), `unknown configSchemaPolicy "warning"`) {
		t.Errorf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
}
