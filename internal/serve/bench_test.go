package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// BenchmarkWebhookToCommit is the time from a push's webhook to the GitOps commit, for a
// change of one cluster type's config on the synthetic fleet (1,000 deployment targets x
// 100 cluster types; FLEETFORM_BENCH_TARGETS and FLEETFORM_BENCH_CLUSTER_TYPES change it):
// the webhook, the poll of the control plane, reading it, and the incremental apply of the
// environment; ms-to-commit stops when the commit is written, ns/op also counts posting the
// desired state of every assignment to the hub. Bar: 2 s to the commit for 100,000
// assignments.
func BenchmarkWebhookToCommit(b *testing.B) {
	spec := fleetgen.Spec{Targets: benchInt(b, "FLEETFORM_BENCH_TARGETS"), ClusterTypes: benchInt(b, "FLEETFORM_BENCH_CLUSTER_TYPES")}.WithDefaults()
	dir := b.TempDir()
	if err := fleetgen.Write(dir, spec); err != nil {
		b.Fatal(err)
	}
	const cpURL = "https://git.example.com/org/fleet"
	cp, gitopsRepo := gittest.NewBare(b), gittest.NewBare(b)
	cp.CommitDir(b, "main", dir)
	h := &committedAt{Hub: storetest.RunningHub(b, hub.Options{})}
	svc := New(Options{Fleet: fleet.New(fleet.Config{ControlPlane: cpURL,
		Read:     controlplane.Options{RepoMap: controlplane.RepoMap{cpURL: cp.Dir}, GitOps: map[string]string{controlplane.EveryEnvironment: gitopsRepo.Dir}},
		CacheDir: b.TempDir(), Hub: fleet.LocalHub(h)}), Interval: interval, Hub: h})
	svc.round(b.Context(), map[string]bool{}) // the start: a cold apply
	hooks := NewWebhooks("secret", svc, nil)
	body := []byte(`{"repository":{"clone_url":"` + cpURL + `.git"}}`)
	mac := hmac.New(sha256.New, []byte("secret"))
	mac.Write(body)
	sig := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	cfg := firstClusterTypeConfig(b, dir)
	i := 0
	var toCommit time.Duration
	for b.Loop() {
		b.StopTimer()
		i++
		setNodeCount(b, cfg, 40+i%2)
		cp.CommitDir(b, "main", dir)
		before := gitopsRepo.Tip(b, spec.Environment)
		b.StartTimer()
		req := httptest.NewRequestWithContext(b.Context(), http.MethodPost, "/api/v1/webhooks/git", bytes.NewReader(body))
		req.Header.Set("X-Hub-Signature-256", sig)
		rec := httptest.NewRecorder()
		start := time.Now()
		hooks.ServeHTTP(rec, req)
		svc.round(b.Context(), map[string]bool{<-svc.wake: true})
		b.StopTimer()
		toCommit += h.at.Sub(start)
		if rec.Code != http.StatusAccepted || gitopsRepo.Tip(b, spec.Environment) == before {
			b.Fatalf("webhook %d: no new commit on %s", rec.Code, spec.Environment)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(toCommit.Milliseconds())/float64(i), "ms-to-commit")
}

// committedAt notes when serve posts a desired state: right after the GitOps commit.
type committedAt struct {
	*hub.Hub
	at time.Time
}

func (c *committedAt) PostDesired(ctx context.Context, d hub.Desired) error {
	c.at = time.Now()
	return c.Hub.PostDesired(ctx, d)
}

func benchInt(b *testing.B, name string) int {
	b.Helper()
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return 0
	}
	return n
}

func firstClusterTypeConfig(b *testing.B, dir string) string {
	b.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "environments", "*", "cluster-types", "*", "*", "*-config.yaml"))
	if err != nil || len(m) == 0 {
		b.Fatalf("no cluster-type config in %s", dir)
	}
	return m[0]
}

var nodeCount = regexp.MustCompile(`NODE_COUNT: "?\d+"?`)

func setNodeCount(b *testing.B, file string, n int) {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	out := nodeCount.ReplaceAll(data, []byte(`NODE_COUNT: "`+strconv.Itoa(n)+`"`))
	if bytes.Equal(out, data) && !bytes.Contains(data, []byte(`NODE_COUNT: "`+strconv.Itoa(n)+`"`)) {
		b.Fatalf("no NODE_COUNT in %s", file)
	}
	if err := os.WriteFile(file, out, 0o600); err != nil {
		b.Fatal(err)
	}
}
