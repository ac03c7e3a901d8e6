package cli_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// TestHubAdminTokenReplaced restarts hub serve with a new FLEETFORM_HUB_ADMIN_TOKEN: the
// admin token configured before and the one generated on the first start stop working, and
// hub serve refuses to start with a replaced one.
func TestHubAdminTokenReplaced(t *testing.T) {
	db := t.TempDir() + "/hub.db"
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "")
	h := serveHub(t, db)
	m := regexp.MustCompile(`shown once[^\n]*\n(ff_\S+)\n`).FindStringSubmatch(h.stderr.String())
	if m == nil {
		t.Fatalf("no generated admin token on stderr:\n%s", h.stderr.String())
	}
	generated := m[1]
	h.stop()
	for _, configured := range []string{"first-admin", "second-admin"} {
		t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", configured)
		h = serveHub(t, db)
		t.Setenv("FLEETFORM_HUB_TOKEN", configured)
		fleetform(t, 0, "hub", "token", "create", "--hub", h.url, "ci-"+configured)
		h.stop()
	}
	h = serveHub(t, db)
	for _, old := range []string{generated, "first-admin"} {
		t.Setenv("FLEETFORM_HUB_TOKEN", old)
		fleetform(t, cli.ExitFailed, "hub", "token", "create", "--hub", h.url, "sneaky")
	}
	h.stop()
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "first-admin")
	fleetform(t, cli.ExitFailed, "hub", "serve", "--addr", "127.0.0.1:0", "--db", "sqlite:"+db)
}

// TestHubTokenCommands lists, creates, revokes and rotates tokens with the CLI.
func TestHubTokenCommands(t *testing.T) {
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, t.TempDir()+"/hub.db")
	clusterToken := strings.TrimSpace(fleetform(t, 0, "hub", "register", "--hub", h.url, "edge-1", "--env", "dev",
		"--cluster-type", "edge", "--expires-in", "720h"))
	var ci api.IssuedToken
	if err := json.Unmarshal([]byte(fleetform(t, 0, "hub", "token", "create", "--hub", h.url, "ci", "--expires-in", "1h", "-o", "json")), &ci); err != nil ||
		ci.ID == "" || ci.ExpiresAt == nil || time.Until(*ci.ExpiresAt) > time.Hour {
		t.Fatalf("token create -o json: %+v %v", ci, err)
	}
	fleetform(t, cli.ExitUsage, "hub", "token", "create", "--hub", h.url, "x", "--expires-in", "-1h")
	fleetform(t, cli.ExitFailed, "hub", "token", "create", "--hub", h.url, "x", "--kind", "root")

	list := fleetform(t, 0, "hub", "token", "list", "--hub", h.url)
	mustContain(t, "token list", list, `ID +KIND +NAME +CLUSTER +CREATED +EXPIRES +STATE`,
		`\n[0-9a-f]{16} +admin +configured +- +\S+ +never +active\n`,
		`\n`+ci.ID+` +read +ci +- +\S+ +\S+Z +active\n`,
		`\n[0-9a-f]{16} +cluster +- +edge-1 +\S+ +\S+Z +active\n`)
	for _, secret := range []string{"admin-secret", clusterToken, ci.Token} {
		if strings.Contains(list, secret) {
			t.Fatalf("token list shows a secret:\n%s", list)
		}
	}
	var clusters api.TokenList
	if err := json.Unmarshal([]byte(fleetform(t, 0, "hub", "token", "list", "--hub", h.url, "--kind", "cluster", "-o", "json")), &clusters); err != nil ||
		len(clusters.Tokens) != 1 || clusters.Tokens[0].Cluster != "edge-1" {
		t.Fatalf("token list --kind cluster: %+v %v", clusters, err)
	}

	mustContain(t, "token revoke", fleetform(t, 0, "hub", "token", "revoke", "--hub", h.url, ci.ID), `^revoked `+ci.ID+` \(read token ci\)\n$`)
	t.Setenv("FLEETFORM_HUB_TOKEN", ci.Token)
	fleetform(t, cli.ExitFailed, "history", "--hub", h.url)
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	fleetform(t, cli.ExitFailed, "hub", "token", "revoke", "--hub", h.url, "0000000000000000")

	rotated := strings.TrimSpace(fleetform(t, 0, "hub", "token", "rotate", "--hub", h.url, clusters.Tokens[0].ID))
	report := hub.Report{Cluster: "edge-1", Revision: "r1", Status: hub.Compliant, ObservedAt: time.Now()}
	for secret, ok := range map[string]bool{clusterToken: false, rotated: true} {
		c, err := client.New(h.url, secret, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Report(context.Background(), report); (err == nil) != ok {
			t.Fatalf("report with the cluster's token (new: %v): %v", ok, err)
		}
	}

	admin := regexp.MustCompile(`\n([0-9a-f]{16}) +admin +configured `).FindStringSubmatch(list)[1]
	fleetform(t, cli.ExitFailed, "hub", "token", "revoke", "--hub", h.url, admin) // the last admin token
	newAdmin := strings.TrimSpace(fleetform(t, 0, "hub", "token", "rotate", "--hub", h.url, admin))
	fleetform(t, cli.ExitFailed, "hub", "token", "list", "--hub", h.url) // the old admin token is revoked
	t.Setenv("FLEETFORM_HUB_TOKEN", newAdmin)
	mustContain(t, "token list after rotation", fleetform(t, 0, "hub", "token", "list", "--hub", h.url, "--kind", "admin"),
		`\n`+admin+` +admin +configured +- +\S+ +never +revoked\n`, ` +admin +configured +- +\S+ +never +active\n`)
}
