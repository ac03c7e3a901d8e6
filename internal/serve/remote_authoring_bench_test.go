package serve

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// BenchmarkRemoteAuthoringPush is the time from an authoring request to the pushed commit,
// against a remote control plane of the synthetic fleet (1,000 deployment targets x 100
// cluster types: 100,000 assignments; FLEETFORM_BENCH_TARGETS and
// FLEETFORM_BENCH_CLUSTER_TYPES change it) served by git http-backend over HTTP on
// loopback with Basic authentication, in push mode: POST /api/v1/controlplane/changes
// setting a config value of one cluster type in dev (the config of its 1,000 assignments
// changes), which fetches the remote into
// serve's mirror, makes, validates and plans the change on the whole fleet, commits and
// pushes it. The mirror and the Fleet's render cache are warm (the first request, outside
// the timing, clones the mirror and renders the whole fleet). Bar: 3 s.
func BenchmarkRemoteAuthoringPush(b *testing.B) {
	spec := fleetgen.Spec{Targets: benchInt(b, "FLEETFORM_BENCH_TARGETS"), ClusterTypes: benchInt(b, "FLEETFORM_BENCH_CLUSTER_TYPES")}.WithDefaults()
	dir := b.TempDir()
	if err := fleetgen.Write(dir, spec); err != nil {
		b.Fatal(err)
	}
	root := b.TempDir()
	remote, err := gittest.InitRepo(filepath.Join(root, "org", "fleet.git"), true)
	if err != nil {
		b.Fatal(err)
	}
	remote.CommitDir(b, "main", dir)
	git := httptest.NewServer(gittest.RequireBasicAuth(gittest.GitHandler(b, root), "git", gitPassword))
	b.Cleanup(git.Close)
	creds, err := gitauth.New(gitauth.Config{Entries: []gitauth.Entry{{URL: git.URL + "/org/", TokenFile: secretFile(b, gitPassword), AllowInsecureHTTP: true}}})
	if err != nil {
		b.Fatal(err)
	}
	h := storetest.RunningHub(b, hub.Options{})
	_, token, err := h.CreateToken(b.Context(), hub.TokenAdmin, "bench", time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	f := fleet.New(fleet.Config{ControlPlane: git.URL + "/org/fleet.git", Credentials: creds, CacheDir: b.TempDir(), Hub: fleet.LocalHub(h)})
	changes := NewControlPlaneChanges(ChangesOptions{Fleet: f, Hub: h, Mode: authoring.ModePush})
	srv := httptest.NewServer(changes.Handler())
	b.Cleanup(srv.Close)
	clusterType := filepath.Base(filepath.Dir(firstClusterTypeConfig(b, dir)))
	i := 0
	post := func() {
		b.StopTimer()
		i++
		body := fmt.Sprintf(`{"operations":[{"op":"set","kind":"ConfigMap","env":"%s","data":{"BENCH_VALUE":"%d"},"scope":{"clusterType":"%s"}}]}`,
			spec.Environment, i, clusterType)
		req, err := http.NewRequestWithContext(b.Context(), http.MethodPost, srv.URL+"/api/v1/controlplane/changes", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		tip := remote.Tip(b, "main")
		b.StartTimer()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		answer, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		b.StopTimer()
		if err != nil || resp.StatusCode != http.StatusOK || remote.Tip(b, "main") == tip {
			b.Fatalf("change %d: %d %s %v", i, resp.StatusCode, answer, err)
		}
		b.StartTimer()
	}
	post() // clones the mirror
	for b.Loop() {
		post()
	}
}
