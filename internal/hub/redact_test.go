package hub_test

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// TestStoredErrorsCarryNoCredentials: a source's or a sync's error that quotes a URL with
// credentials (as net/http quotes a request's URL with its user name) is stored, and so
// shown to every reader, without them.
func TestStoredErrorsCarryNoCredentials(t *testing.T) {
	h := storetest.RunningHub(t, hub.Options{SweepEvery: -1})
	ctx := t.Context()
	leak := `Get "https://ghp_s3cret@git.example.com/org/cp/info/refs": dial tcp: connection refused`
	if err := h.PutSource(ctx, hub.SourceState{URL: "https://git.example.com/org/cp", Kind: hub.SourceKindControlPlane, LastError: leak, Failures: 1}); err != nil {
		t.Fatal(err)
	}
	if err := h.RecordSync(ctx, hub.SyncRecord{Environment: "dev", Error: leak,
		Failed: []hub.FailedAssignment{{ClusterType: "edge", DeploymentTarget: "shop-dev", Error: leak}}}); err != nil {
		t.Fatal(err)
	}
	sources, err := h.Sources(ctx)
	if err != nil || len(sources) != 1 {
		t.Fatalf("sources: %v, %v", sources, err)
	}
	sync, err := h.LatestSync(ctx, "dev")
	if err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"source": sources[0].LastError, "sync": sync.Error, "failed assignment": sync.Failed[0].Error} {
		if strings.Contains(text, "s3cret") || !strings.Contains(text, "https://***@git.example.com/org/cp/info/refs") {
			t.Errorf("the %s's error as stored: %q", what, text)
		}
	}
}
