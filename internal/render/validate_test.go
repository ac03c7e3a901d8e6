package render_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/testutil/crdtest"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// coreKinds are the other objects the built-in templates may emit; they are checked
// structurally (see checkObject).
var coreKinds = map[string]bool{
	"v1/Namespace":                                      true,
	"v1/ServiceAccount":                                 true,
	"v1/ResourceQuota":                                  true,
	"v1/LimitRange":                                     true,
	"v1/ConfigMap":                                      true,
	"networking.k8s.io/v1/NetworkPolicy":                true,
	"rbac.authorization.k8s.io/v1/RoleBinding":          true,
	"secrets-store.csi.x-k8s.io/v1/SecretProviderClass": true,
}

// TestBuiltinOutputValid checks every file of the golden renders and of the example
// control plane: Flux and Argo CD objects
// against their real CRD schemas, the other Kubernetes objects structurally, Ansible
// playbooks as lists of plays, and shell files with sh -n.
func TestBuiltinOutputValid(t *testing.T) {
	schemas := crdtest.Schemas(t)
	seen := map[string]int{}
	outputs := map[string]*render.Output{}
	for env, out := range renderGolden(t) {
		outputs[env] = out
	}
	// The example control plane of the README quick start (examples/) renders with the
	// built-in templates too.
	examples := filepath.Join(gittest.ModuleRoot(t), "examples")
	for env, out := range renderAll(t, filepath.Join(examples, "platform"), exampleRepoMap(t, filepath.Join(examples, "fleetform.yaml"))) {
		outputs["examples/"+env] = out
	}
	for env, out := range outputs {
		for p, content := range out.Tree() {
			where := env + "/" + p
			switch {
			case path.Base(p) == render.ReadmeFile || p == render.PromotedCommitFile:
			case strings.HasSuffix(p, ".sh"):
				checkShell(t, where, content)
				seen["sh"]++
			default:
				for i, doc := range decodeAll(t, where, content) {
					where := fmt.Sprintf("%s[%d]", where, i)
					switch d := doc.(type) {
					case []any:
						checkPlaybook(t, where, d)
						seen["playbook"]++
					case map[string]any:
						gvk := checkObject(t, where, d)
						seen[gvk]++
						if s, ok := schemas[gvk]; ok {
							if err := s.Validate(d); err != nil {
								t.Errorf("%s: %s does not validate against its CRD schema:\n%v\n%s", where, gvk, err, content)
							}
						}
					default:
						t.Errorf("%s: a document must be a Kubernetes object or an Ansible playbook, got %T", where, doc)
					}
				}
			}
		}
	}
	for _, want := range []string{"sh", "playbook"} {
		if seen[want] == 0 {
			t.Errorf("no %s output was checked", want)
		}
	}
	for gvk := range crdtest.Files {
		if seen[gvk] == 0 {
			t.Errorf("no %s was validated against its CRD", gvk)
		}
	}
	for gvk := range coreKinds {
		if seen[gvk] == 0 {
			t.Errorf("no %s was rendered: extend the golden control plane", gvk)
		}
	}
}

// exampleRepoMap reads the repoMap of the example's config file, resolved against the
// file's folder as the --config flag does.
func exampleRepoMap(t *testing.T, config string) controlplane.RepoMap {
	t.Helper()
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		RepoMap map[string]string `yaml:"repoMap"`
	}
	if err := yaml.Unmarshal(data, &fc); err != nil {
		t.Fatalf("%s: %v", config, err)
	}
	m := controlplane.RepoMap{}
	for url, p := range fc.RepoMap {
		m[url] = filepath.Join(filepath.Dir(config), p)
	}
	return m
}

func decodeAll(t *testing.T, where string, content []byte) []any {
	t.Helper()
	var docs []any
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Errorf("%s: invalid YAML: %v\n%s", where, err, content)
			return nil
		}
		if doc == nil {
			t.Errorf("%s: empty YAML document:\n%s", where, content)
			continue
		}
		docs = append(docs, doc)
	}
	if len(docs) == 0 {
		t.Errorf("%s: no YAML document", where)
	}
	return docs
}

// checkObject checks what the API server would check first: apiVersion, kind, a valid
// name, namespace, labels and annotations, and for some kinds the fields that matter. It
// returns "<apiVersion>/<kind>".
func checkObject(t *testing.T, where string, obj map[string]any) string {
	t.Helper()
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	gvk := apiVersion + "/" + kind
	if _, isCRD := crdtest.Files[gvk]; !isCRD && !coreKinds[gvk] {
		t.Errorf("%s: unexpected object %q (apiVersion and kind must be known)", where, gvk)
	}
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	errs := validation.IsDNS1123Subdomain(name)
	if kind == "Namespace" {
		errs = validation.IsDNS1123Label(name)
	}
	for _, e := range errs {
		t.Errorf("%s: metadata.name %q: %s", where, name, e)
	}
	if ns, ok := meta["namespace"]; ok {
		s, _ := ns.(string)
		for _, e := range validation.IsDNS1123Label(s) {
			t.Errorf("%s: metadata.namespace %q: %s", where, s, e)
		}
	}
	labels := stringMap(t, where+": metadata.labels", meta["labels"])
	for k, v := range labels {
		for _, e := range append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...) {
			t.Errorf("%s: label %s=%q: %s", where, k, v, e)
		}
	}
	if labels["fleetform.io/deployment-target"] == "" {
		t.Errorf("%s: no fleetform.io/deployment-target label", where)
	}
	for k := range stringMap(t, where+": metadata.annotations", meta["annotations"]) {
		for _, e := range validation.IsQualifiedName(k) {
			t.Errorf("%s: annotation %s: %s", where, k, e)
		}
	}
	checkKind(t, where, kind, obj)
	return gvk
}

func checkKind(t *testing.T, where, kind string, obj map[string]any) {
	t.Helper()
	spec, _ := obj["spec"].(map[string]any)
	switch kind {
	case "ConfigMap":
		for k := range stringMap(t, where+": data", obj["data"]) {
			for _, e := range validation.IsConfigMapKey(k) {
				t.Errorf("%s: data key %q: %s", where, k, e)
			}
		}
	case "ResourceQuota":
		checkQuantities(t, where+": spec.hard", spec["hard"])
	case "LimitRange":
		limits, _ := spec["limits"].([]any)
		if len(limits) == 0 {
			t.Errorf("%s: spec.limits is empty", where)
		}
		for _, l := range limits {
			l, _ := l.(map[string]any)
			checkQuantities(t, where+": spec.limits.default", l["default"])
			checkQuantities(t, where+": spec.limits.defaultRequest", l["defaultRequest"])
		}
	case "NetworkPolicy":
		if _, ok := spec["podSelector"].(map[string]any); !ok {
			t.Errorf("%s: spec.podSelector is required", where)
		}
	case "RoleBinding":
		ref, _ := obj["roleRef"].(map[string]any)
		if ref["apiGroup"] != "rbac.authorization.k8s.io" || ref["name"] == nil || (ref["kind"] != "ClusterRole" && ref["kind"] != "Role") {
			t.Errorf("%s: invalid roleRef %v", where, ref)
		}
		subjects, _ := obj["subjects"].([]any)
		for _, s := range subjects {
			s, _ := s.(map[string]any)
			if s["name"] == nil || (s["kind"] != "ServiceAccount" && s["kind"] != "Group" && s["kind"] != "User") {
				t.Errorf("%s: invalid subject %v", where, s)
			}
		}
	case "SecretProviderClass":
		if p, _ := spec["provider"].(string); p == "" {
			t.Errorf("%s: spec.provider is required", where)
		}
	}
}

// quantityRE is the syntax of a Kubernetes resource quantity (k8s.io/apimachinery
// resource.ParseQuantity): a decimal number with an optional binary, decimal or exponent
// suffix.
var quantityRE = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$`)

func checkQuantities(t *testing.T, where string, v any) {
	t.Helper()
	for k, q := range stringMap(t, where, v) {
		if !quantityRE.MatchString(q) {
			t.Errorf("%s.%s: %q is not a quantity", where, k, q)
		}
	}
}

// stringMap returns v as a map of strings, reporting anything else.
func stringMap(t *testing.T, where string, v any) map[string]string {
	t.Helper()
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Errorf("%s: want a map, got %T", where, v)
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			t.Errorf("%s.%s: want a string, got %T (%v)", where, k, e, e)
		}
		out[k] = s
	}
	return out
}

// checkPlaybook checks that an Ansible playbook is a list of plays, each with hosts and
// named tasks that call one known module each.
func checkPlaybook(t *testing.T, where string, plays []any) {
	t.Helper()
	modules := map[string]bool{"ansible.builtin.cron": true, "ansible.builtin.user": true, "ansible.builtin.stat": true, "ansible.builtin.copy": true}
	taskKeys := map[string]bool{"name": true, "register": true, "when": true}
	for i, p := range plays {
		play, ok := p.(map[string]any)
		if !ok {
			t.Errorf("%s: play %d is a %T, want a map", where, i, p)
			continue
		}
		if h, _ := play["hosts"].(string); h == "" {
			t.Errorf("%s: play %d has no hosts", where, i)
		}
		tasks, _ := play["tasks"].([]any)
		if len(tasks) == 0 {
			t.Errorf("%s: play %d has no tasks", where, i)
		}
		for j, tk := range tasks {
			task, _ := tk.(map[string]any)
			if n, _ := task["name"].(string); n == "" {
				t.Errorf("%s: play %d task %d has no name", where, i, j)
			}
			calls := 0
			for k := range task {
				switch {
				case modules[k]:
					calls++
				case !taskKeys[k]:
					t.Errorf("%s: play %d task %d: unexpected key %q", where, i, j, k)
				}
			}
			if calls != 1 {
				t.Errorf("%s: play %d task %d calls %d modules, want 1", where, i, j, calls)
			}
		}
	}
}
