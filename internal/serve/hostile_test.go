package serve

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/hostilehttp"
	"github.com/fleetform/fleetform/internal/ui"
)

// hostileServeDir holds serve's hostile-request corpus, at the repository's root.
var hostileServeDir = filepath.Join("..", "..", "testdata", "hostile", "serve")

// TestHostileRequests runs the corpus of testdata/hostile/serve (see its README): each file
// is one request to serve's one port (the web UI, the hub's API, the authoring API and the
// webhooks) and the answer it must get. No answer shows a secret of the fixture, and no
// request changes the control plane or moves a GitOps branch.
func TestHostileRequests(t *testing.T) {
	for _, file := range hostilehttp.Files(t, hostileServeDir) {
		c := hostilehttp.Read(t, file)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			newHostileServe(t).run(t, c)
		})
	}
}

// hostileServe is the service fixture (newFixture), synced once, behind serve's handler,
// with an admin and a read-only token, a session of each, and a session signed out.
type hostileServe struct {
	*fixture
	url     string
	secrets map[string]string
}

// hostileWebhookSecret signs the fixture's webhooks.
const hostileWebhookSecret = "webhook-s3cret"

func newHostileServe(t *testing.T) *hostileServe {
	t.Helper()
	f := newFixture(t)
	ctx := t.Context()
	f.svc.round(ctx, map[string]bool{})
	s := &hostileServe{fixture: f, secrets: map[string]string{"webhook": hostileWebhookSecret}}
	for name, kind := range map[string]string{"admin": hub.TokenAdmin, "read": hub.TokenRead} {
		tok, secret, err := f.hub.CreateToken(ctx, kind, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		s.secrets[name] = secret
		session, err := f.hub.CreateSession(ctx, hub.SessionOf{TokenID: tok.ID}, name, f.clock.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		s.secrets[name+"Session"] = session
	}
	ended, err := f.hub.CreateSession(ctx, hub.SessionOf{TokenID: hub.TokenID(hub.HashToken(s.secrets["admin"]))}, "admin", f.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.hub.EndSession(ctx, ended); err != nil {
		t.Fatal(err)
	}
	s.secrets["endedSession"] = ended
	web, err := ui.New(f.hub, ui.Options{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	changes := NewControlPlaneChanges(ChangesOptions{Fleet: f.svc.opts.Fleet, Hub: f.hub})
	srv := httptest.NewServer(Handler(ui.Mount(api.New(f.hub, api.Options{}), web), f.hub, f.svc,
		NewWebhooks(hostileWebhookSecret, f.svc, nil), changes.Handler()))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// run sends the case's request (a template with {{admin}}, {{read}}, {{adminSession}},
// {{readSession}}, {{endedSession}} and {{repeat "x" N}}) and checks the answer; then that
// the control plane and the GitOps branches did not move.
func (s *hostileServe) run(t *testing.T, c hostilehttp.Case) {
	t.Helper()
	cp, gitops := s.cp.Tip(t, "main"), s.tips()
	funcs := template.FuncMap{"repeat": strings.Repeat}
	for name, secret := range s.secrets {
		funcs[name] = func() string { return secret }
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c.Do(t, client, c.NewRequest(t, s.url, funcs), s.secrets)
	if got := s.cp.Tip(t, "main"); got != cp {
		t.Errorf("the request changed the control plane: %s -> %s", cp, got)
	}
	for env, tip := range s.tips() {
		if tip != gitops[env] {
			t.Errorf("the request moved GitOps branch %s", env)
		}
	}
}
