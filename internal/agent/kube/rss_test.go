package kube_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
)

// childEnv makes the test binary run the fleetform command line instead of the tests, so
// that BenchmarkAgentRSS measures a real `fleetform agent kubernetes` process.
const childEnv = "FLEETFORM_AGENT_RSS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// BenchmarkAgentRSS measures the peak RSS of a `fleetform agent kubernetes` process
// watching 1,000 reconciler objects: 400 GitRepositories, 400 Kustomizations (30 inventory
// entries each) and 200 Argo CD Applications (30 resources and 10 history entries each),
// plus the platform Kustomization, served by a fake API server over HTTP (list then watch)
// in this process. The agent is this test binary running the command line, or the binary
// named by FLEETFORM_AGENT_BIN (e.g. bin/fleetform). Run it alone:
//
//	go test -run '^$' -bench AgentRSS -benchtime 1x ./internal/agent/kube
func BenchmarkAgentRSS(b *testing.B) {
	for range b.N {
		api := httptest.NewServer(newFakeAPIServer(b, 1000))
		var got atomic.Int32
		hubSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var rep hub.Report
			if err := json.NewDecoder(r.Body).Decode(&rep); err == nil {
				got.Store(int32(len(rep.Deployments)))
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		kubeconfig := filepath.Join(b.TempDir(), "kubeconfig")
		writeKubeconfig(b, kubeconfig, api.URL)

		bin := os.Getenv("FLEETFORM_AGENT_BIN")
		if bin == "" {
			bin = os.Args[0]
		}
		cmd := exec.CommandContext(b.Context(), bin, "agent", "kubernetes", "--kubeconfig", kubeconfig,
			"--hub", hubSrv.URL, "--cluster", "c", "--log-level", "error")
		cmd.Env = append(os.Environ(), childEnv+"=1", "FLEETFORM_AGENT_TOKEN=t")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for got.Load() != 1000 {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				b.Fatalf("the agent did not report the 1,000 deployment targets (last report: %d)", got.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
		b.ReportMetric(procStatusMiB(b, cmd.Process.Pid, "VmHWM"), "peak-RSS-MiB")
		b.ReportMetric(procStatusMiB(b, cmd.Process.Pid, "VmRSS"), "RSS-MiB")
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		hubSrv.Close()
		api.Close()
	}
}

func writeKubeconfig(b *testing.B, path, server string) {
	b.Helper()
	config := `apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "` + server + `"}}]
users: [{name: agent, user: {token: fake}}]
contexts: [{name: fake, context: {cluster: fake, user: agent}}]
current-context: fake
`
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
}

// fakeAPIServer serves discovery, list and watch (no events) for the three resources.
type fakeAPIServer struct {
	lists map[string][]byte // path -> list JSON
}

func newFakeAPIServer(b *testing.B, n int) *fakeAPIServer {
	b.Helper()
	items := map[string][]any{}
	add := func(resource string, obj map[string]any) { items[resource] = append(items[resource], obj) }
	add("kustomizations", kustomization("flux-system", "", 0))
	for i := range n {
		name := fmt.Sprintf("t%04d", i)
		switch {
		case i < n*2/5:
			add("gitrepositories", gitRepository(name))
		case i < n*4/5:
			add("kustomizations", kustomization(name, name, 30))
		default:
			add("applications", application(name, 30, 10))
		}
	}
	s := &fakeAPIServer{lists: map[string][]byte{}}
	for _, r := range []struct{ gv, resource, kind string }{
		{"source.toolkit.fluxcd.io/v1", "gitrepositories", "GitRepository"},
		{"kustomize.toolkit.fluxcd.io/v1", "kustomizations", "Kustomization"},
		{"argoproj.io/v1alpha1", "applications", "Application"},
	} {
		list, err := json.Marshal(map[string]any{"apiVersion": r.gv, "kind": r.kind + "List",
			"metadata": map[string]any{"resourceVersion": "1"}, "items": items[r.resource]})
		if err != nil {
			b.Fatal(err)
		}
		s.lists["/apis/"+r.gv+"/"+r.resource] = list
		discovery, _ := json.Marshal(map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": r.gv,
			"resources": []any{map[string]any{"name": r.resource, "singularName": strings.ToLower(r.kind), "namespaced": true,
				"kind": r.kind, "verbs": []string{"get", "list", "watch"}}}})
		s.lists["/apis/"+r.gv] = discovery
	}
	return s
}

func (s *fakeAPIServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := s.lists[r.URL.Path]
	if !ok {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	q := r.URL.Query()
	switch {
	case q.Get("watch") == "true" && q.Get("sendInitialEvents") == "true":
		// An API server without watch-list: the reflector falls back to list, then watch.
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"BadRequest","code":400}`))
	case q.Get("watch") == "true":
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	default:
		_, _ = w.Write(body)
	}
}

func meta(name, target string) map[string]any {
	labels := map[string]any{"app.kubernetes.io/managed-by": "fleetform", "fleetform.io/environment": "dev",
		"fleetform.io/workload": "w-" + name}
	if target != "" {
		labels["fleetform.io/deployment-target"] = target
	}
	return map[string]any{"name": name, "namespace": "flux-system", "resourceVersion": "1", "generation": int64(1),
		"uid": "uid-" + name, "labels": labels, "creationTimestamp": "2026-03-01T12:00:00Z"}
}

func readyCondition(msg string) []any {
	return []any{map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "message": msg,
		"lastTransitionTime": "2026-03-01T12:00:00Z", "observedGeneration": int64(1)}}
}

func gitRepository(name string) map[string]any {
	rev := "main@sha1:" + strings.Repeat("a", 40)
	return map[string]any{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository", "metadata": meta(name, name),
		"spec": map[string]any{"interval": "1m", "url": "https://github.com/example-org/" + name, "ref": map[string]any{"branch": "dev"}},
		"status": map[string]any{"observedGeneration": int64(1), "conditions": readyCondition("stored artifact for revision '" + rev + "'"),
			"artifact": map[string]any{"revision": rev, "digest": "sha256:" + strings.Repeat("b", 64), "size": int64(91318),
				"path": "gitrepository/flux-system/" + name + "/x.tar.gz", "url": "http://source-controller/gitrepository/flux-system/" + name + "/x.tar.gz",
				"lastUpdateTime": "2026-03-01T12:00:00Z"}}}
}

func kustomization(name, target string, inventory int) map[string]any {
	rev := "main@sha1:" + strings.Repeat("c", 40)
	entries := make([]any, inventory)
	for j := range entries {
		entries[j] = map[string]any{"id": fmt.Sprintf("dev-%s_deploy-%d_apps_Deployment", name, j), "v": "v1"}
	}
	return map[string]any{"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization", "metadata": meta(name, target),
		"spec": map[string]any{"interval": "1m", "path": "./" + name, "prune": true, "targetNamespace": "dev-" + name,
			"sourceRef": map[string]any{"kind": "GitRepository", "name": name}},
		"status": map[string]any{"observedGeneration": int64(1), "conditions": readyCondition("Applied revision: " + rev),
			"lastAppliedRevision": rev, "lastAttemptedRevision": rev, "inventory": map[string]any{"entries": entries}}}
}

func application(name string, resources, history int) map[string]any {
	res, hist := make([]any, resources), make([]any, history)
	for j := range res {
		res[j] = map[string]any{"group": "apps", "kind": "Deployment", "name": fmt.Sprintf("deploy-%d", j), "namespace": "dev-" + name,
			"status": "Synced", "version": "v1", "health": map[string]any{"status": "Healthy"}}
	}
	for j := range hist {
		hist[j] = map[string]any{"id": int64(j), "revision": strings.Repeat(strconv.Itoa(j%10), 40), "deployedAt": "2026-03-01T12:00:00Z",
			"deployStartedAt": "2026-03-01T11:59:58Z", "source": map[string]any{"repoURL": "https://github.com/example-org/" + name, "path": "./dev"}}
	}
	m := meta(name, name)
	m["namespace"] = "argocd"
	return map[string]any{"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": m,
		"spec": map[string]any{"project": "default", "destination": map[string]any{"server": "https://kubernetes.default.svc", "namespace": "dev-" + name},
			"source": map[string]any{"repoURL": "https://github.com/example-org/" + name, "path": "./dev", "targetRevision": "dev"}},
		"status": map[string]any{"sync": map[string]any{"status": "Synced", "revision": strings.Repeat("d", 40)},
			"health":         map[string]any{"status": "Healthy"},
			"operationState": map[string]any{"phase": "Succeeded", "message": "successfully synced (all tasks run)", "syncResult": map[string]any{"revision": strings.Repeat("d", 40)}},
			"resources":      res, "history": hist, "reconciledAt": "2026-03-01T12:00:00Z"}}
}

// procStatusMiB reads a "kB" field of /proc/<pid>/status, in MiB.
func procStatusMiB(b *testing.B, pid int, field string) float64 {
	b.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
