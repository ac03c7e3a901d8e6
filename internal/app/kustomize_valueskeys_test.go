package app_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// renderKustomizeValues renders target edge of a kustomize source with the config values
// cfgValues: the folder's files, or the render's error.
func renderKustomizeValues(t *testing.T, cfgValues string) (map[string][]byte, error) {
	t.Helper()
	src := gittest.New(t)
	src.Commit(t, "main", map[string]string{
		"workload.yaml":             kustomizeWorkload,
		"fleetform-app.yaml":        "kustomize: deploy\n",
		"deploy/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plain\n",
	})
	cfgRepo := gittest.New(t)
	cfgRepo.Commit(t, "main", map[string]string{"dev/edge/values.yaml": cfgValues})
	repos := controlplane.NewRepos(nil, nil, nil)
	run := newRun(t, loadApp(t, repos, src.Dir), openRepo(t, repos, cfgRepo.Dir), "dev", "main", nil, "2.0.0")
	folder, err := run.Render(t.Context(), run.Targets[0])
	if err != nil {
		return nil, err
	}
	return folder.Files, nil
}

// TestKustomizeValuesConfigMapKeys: the values ConfigMap's keys are the leaf paths as they
// were, and every one is a key Kubernetes accepts in a ConfigMap.
func TestKustomizeValuesConfigMapKeys(t *testing.T) {
	files, err := renderKustomizeValues(t, "logging:\n  level: Info\nfeature-flags: [a, b]\nmax_conns: 10\nempty: {}\n"+
		"Deep:\n  er:\n    key-1: x\n")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct{ Data map[string]string }
	if err := sigsyaml.Unmarshal(files["configmap-web-values.yaml"], &cm); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"logging.level": "Info", "feature-flags": "- a\n- b", "max_conns": "10", "empty": "{}", "Deep.er.key-1": "x"}
	if len(cm.Data) != len(want) {
		t.Errorf("data: %v, want %v", cm.Data, want)
	}
	for k, v := range want {
		if cm.Data[k] != v {
			t.Errorf("data[%q] = %q, want %q", k, cm.Data[k], v)
		}
	}
	for k := range cm.Data {
		if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
			t.Errorf("key %q: %v", k, errs)
		}
	}
}

// TestKustomizeValuesConfigMapBadKeys: a leaf path that is not a valid ConfigMap key (a key
// with a dot, a '/' or a space, a path longer than 253 characters) fails the target's
// render, naming each path, the line that set it and the fix, instead of a ConfigMap the
// API server refuses.
func TestKustomizeValuesConfigMapBadKeys(t *testing.T) {
	long := strings.Repeat("k", 250)
	_, err := renderKustomizeValues(t, "logging:\n  level: Info\npodAnnotations:\n  prometheus.io/scrape: \"true\"\n"+
		"\"key with space\": 1\n"+long+":\n  abc: 1\n")
	if err == nil {
		t.Fatal("rendered a values ConfigMap with keys Kubernetes refuses")
	}
	for _, s := range []string{
		"target edge: the values ConfigMap web-values cannot hold these keys",
		"rename them with letters, digits, '-' and '_' only",
		"\n  key with space (set in config dev/edge/values.yaml:5): a valid config key must consist of alphanumeric characters",
		"\n  podAnnotations[\"prometheus.io/scrape\"] (set in config dev/edge/values.yaml:4): a valid config key",
		"\n  " + long + ".abc (set in config dev/edge/values.yaml:7): must be no more than 253 characters",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error lacks %q:\n%v", s, err)
		}
	}
	if strings.Contains(err.Error(), "logging.level") {
		t.Errorf("error names a valid key:\n%v", err)
	}
}
