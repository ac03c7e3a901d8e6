package cli_test

import (
	"regexp"
	"testing"

	"github.com/fleetform/fleetform/internal/cli"
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
