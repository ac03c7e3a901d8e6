package cli_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// TestHubRelay forwards an agent's report through `hub relay` with a relay token: the hub
// counts it, and a report with another cluster's token is refused with the hub's answer.
func TestHubRelay(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, t.TempDir()+"/hub.db")
	edge1 := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", h.url, "edge-1", "--env", "dev", "--cluster-type", "edge"))
	var relayToken struct {
		Token string `json:"token"`
	}
	out := fleetform(t, 0, "hub", "token", "create", "plant-7", "--kind", "relay", "--hub", h.url, "-o", "json")
	if err := json.Unmarshal([]byte(out), &relayToken); err != nil || relayToken.Token == "" {
		t.Fatalf("relay token: %v\n%s", err, out)
	}
	fleetform(t, cli.ExitUsage, "hub", "relay", "--hub", h.url, "--max-batch", "0")

	t.Setenv("FLEETFORM_HUB_TOKEN", relayToken.Token)
	rl := startServing(t, "hub", "relay", "--hub", h.url, "--addr", "127.0.0.1:0", "--max-batch", "10")
	agent, err := client.New(rl.url, edge1, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	observed := time.Now().UTC()
	if err := agent.Report(ctx, hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant, ObservedAt: observed}); err != nil {
		t.Fatalf("report through the relay: %v", err)
	}
	err = agent.Report(ctx, hub.Report{Cluster: "edge-2", Revision: "r1", Status: hub.Compliant, ObservedAt: observed})
	if hub.ErrorCode(err) != hub.CodeForbidden {
		t.Fatalf("a report for another cluster through the relay: %v", err)
	}
	admin, err := client.New(h.url, "admin-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := admin.Cluster(ctx, "edge-1")
	if err != nil || c.Revision != "r1" || c.Status != hub.Compliant {
		t.Fatalf("the hub has %+v, %v", c.ClusterRecord, err)
	}
	if code := rl.stop(); code != 0 {
		t.Fatalf("hub relay exited %d:\n%s", code, rl.stderr.String())
	}
	if strings.Contains(rl.stderr.String(), relayToken.Token) || strings.Contains(rl.stderr.String(), edge1) {
		t.Fatalf("a token in the relay's output:\n%s", rl.stderr.String())
	}
}
