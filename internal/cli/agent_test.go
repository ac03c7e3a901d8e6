package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// deployObjects reads every object of deploy/agent, by kind.
func deployObjects(t *testing.T) map[string][]map[string]any {
	t.Helper()
	dir := filepath.Join(gittest.ModuleRoot(t), "deploy", "agent")
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests in %s: %v", dir, err)
	}
	out := map[string][]map[string]any{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			var m map[string]any
			if err := yaml.UnmarshalStrict([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kind, _ := m["kind"].(string)
			out[kind] = append(out[kind], m)
		}
	}
	return out
}

// get walks a decoded object: strings are map keys, ints slice indexes.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

func TestAgentRBACIsReadOnlyOnTheThreeKinds(t *testing.T) {
	objs := deployObjects(t)
	roles := objs["ClusterRole"]
	if len(roles) != 1 || len(objs["Role"]) != 0 || len(objs["RoleBinding"]) != 0 {
		t.Fatalf("want exactly one ClusterRole and no Role: %d ClusterRoles, %d Roles", len(roles), len(objs["Role"]))
	}
	type rule struct{ group, resource, verbs string }
	var got []rule
	for _, r := range get(roles[0], "rules").([]any) {
		groups, resources, verbs := get(r, "apiGroups").([]any), get(r, "resources").([]any), get(r, "verbs").([]any)
		if get(r, "resourceNames") != nil || get(r, "nonResourceURLs") != nil {
			t.Errorf("rule %v: no resourceNames or nonResourceURLs expected", r)
		}
		var vs []string
		for _, v := range verbs {
			vs = append(vs, v.(string))
		}
		slices.Sort(vs)
		for _, g := range groups {
			for _, res := range resources {
				got = append(got, rule{g.(string), res.(string), strings.Join(vs, ",")})
			}
		}
	}
	slices.SortFunc(got, func(a, b rule) int { return strings.Compare(a.group+a.resource, b.group+b.resource) })
	want := []rule{
		{"argoproj.io", "applications", "get,list,watch"},
		{"kustomize.toolkit.fluxcd.io", "kustomizations", "get,list,watch"},
		{"source.toolkit.fluxcd.io", "gitrepositories", "get,list,watch"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ClusterRole rules %v, want exactly %v", got, want)
	}

	binding := objs["ClusterRoleBinding"]
	deployment := objs["Deployment"]
	if len(binding) != 1 || len(deployment) != 1 || len(objs["ServiceAccount"]) != 1 {
		t.Fatal("want one ClusterRoleBinding, one Deployment, one ServiceAccount")
	}
	sa, ns := get(objs["ServiceAccount"][0], "metadata", "name"), get(objs["ServiceAccount"][0], "metadata", "namespace")
	if get(binding[0], "roleRef", "name") != get(roles[0], "metadata", "name") ||
		get(binding[0], "subjects", 0, "name") != sa || get(binding[0], "subjects", 0, "namespace") != ns {
		t.Errorf("the binding does not bind the ClusterRole to the ServiceAccount %s/%s", ns, sa)
	}
	pod := get(deployment[0], "spec", "template", "spec")
	if get(pod, "serviceAccountName") != sa || get(deployment[0], "metadata", "namespace") != ns {
		t.Errorf("the Deployment does not run as %s/%s", ns, sa)
	}
	if get(pod, "volumes", 0, "secret", "secretName") != "fleetform-agent-token" {
		t.Errorf("the Deployment does not read the token Secret")
	}
}

func TestAgentDeploymentArgsAreValid(t *testing.T) {
	objs := deployObjects(t)
	var args []string
	for _, a := range get(objs["Deployment"][0], "spec", "template", "spec", "containers", 0, "args").([]any) {
		s := strings.ReplaceAll(a.(string), "$(FLEETFORM_HUB)", "https://hub.example.com")
		args = append(args, strings.ReplaceAll(s, "$(FLEETFORM_CLUSTER)", "c1"))
	}
	root := newRoot(&env{})
	cmd, rest, err := root.Find(args)
	if err != nil || cmd.Name() != "kubernetes" || cmd.Parent().Name() != "agent" {
		t.Fatalf("args %v do not name `agent kubernetes`: %v", args, err)
	}
	if err := cmd.ParseFlags(rest); err != nil {
		t.Fatalf("args %v: %v", args, err)
	}
	if tf, _ := cmd.Flags().GetString("token-file"); tf != "/var/run/secrets/fleetform/token" {
		t.Errorf("--token-file %q does not match the Secret's mount", tf)
	}
}

func TestAgentUsageErrors(t *testing.T) {
	t.Setenv("FLEETFORM_AGENT_TOKEN", "")
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"agent", "kubernetes", "--cluster", "c"}, "--hub and --cluster are required"},
		{[]string{"agent", "kubernetes", "--hub", "hub:8080", "--cluster", "c"}, "want http://HOST:PORT or https://HOST:PORT"},
		{[]string{"agent", "kubernetes", "--hub", "http://hub", "--cluster", "c"}, "no token: set FLEETFORM_AGENT_TOKEN or --token-file"},
		{[]string{"agent", "kubernetes", "--hub", "http://hub", "--cluster", "c", "--token-file", "/nonexistent"}, "--token-file"},
		{[]string{"agent", "host", "--hub", "http://hub", "--cluster", "c"}, "--gitops, --branch and --cluster-type are required"},
	} {
		var stderr bytes.Buffer
		if code := Main(t.Context(), tc.args, nil, &bytes.Buffer{}, &stderr); code != ExitUsage || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, stderr.String(), ExitUsage, tc.err)
		}
	}
	t.Setenv("FLEETFORM_AGENT_TOKEN", "x")
	var stderr bytes.Buffer
	code := Main(t.Context(), []string{"agent", "kubernetes", "--hub", "http://hub", "--cluster", "c", "--platform", "deployment/a/b"}, nil, &bytes.Buffer{}, &stderr)
	if code != ExitUsage || !strings.Contains(stderr.String(), "--platform") {
		t.Errorf("bad --platform: exit %d, %q", code, stderr.String())
	}
}

// reportSink is a hub that accepts reports with the right token.
type reportSink struct {
	mu      sync.Mutex
	reports []hub.Report
}

func (s *reportSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/api/v1/reports" || r.Header.Get("Authorization") != "Bearer host-token" {
		http.Error(w, `{"error":"no"}`, http.StatusUnauthorized)
		return
	}
	var rep hub.Report
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		http.Error(w, `{"error":"bad"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.reports = append(s.reports, rep)
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func TestAgentHostOnceReportsToTheHub(t *testing.T) {
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		if os.Getenv("FLEETFORM_REQUIRE_ANSIBLE") == "1" {
			t.Fatalf("ansible-playbook is required (FLEETFORM_REQUIRE_ANSIBLE=1): %v", err)
		}
		t.Skip("ansible-playbook is not installed (apt-get install ansible-core); CI sets FLEETFORM_REQUIRE_ANSIBLE=1")
	}
	root := t.TempDir()
	marker := filepath.Join(root, "applied")
	repo := gittest.NewBare(t)
	commit := repo.Commit(t, "dev", map[string]string{
		"gitops/vm-line/README.md": "cluster type vm-line",
		"gitops/vm-line/plc-gateway-bench/reconciler.yaml": `- hosts: localhost
  gather_facts: false
  tasks:
    - ansible.builtin.copy:
        dest: "` + marker + `"
        content: "applied\n"
`,
	})
	sink := &reportSink{}
	srv := httptest.NewServer(sink)
	defer srv.Close()
	tokenFile := filepath.Join(root, "token")
	if err := os.WriteFile(tokenFile, []byte("host-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Main(t.Context(), []string{"agent", "host", "--once", "--hub", srv.URL, "--cluster", "line-7", "--token-file", tokenFile,
		"--gitops", repo.URL(), "--branch", "dev", "--path", "gitops", "--cluster-type", "vm-line", "--state-dir", filepath.Join(root, "state")},
		nil, &stdout, &stderr)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the playbook did not run: %v", err)
	}
	if !strings.Contains(stdout.String(), "plc-gateway-bench") || !strings.Contains(stdout.String(), "Compliant") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.reports) != 1 {
		t.Fatalf("hub received %d reports, want 1", len(sink.reports))
	}
	r := sink.reports[0]
	if r.Cluster != "line-7" || r.Revision != commit.String() || r.Status != hub.Compliant || r.GitOpsPath != "gitops/vm-line" ||
		len(r.Deployments) != 1 || r.Deployments[0].DeploymentTarget != "plc-gateway-bench" || r.Deployments[0].Status != hub.Ready {
		t.Fatalf("report %+v", r)
	}
}
