package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
	"github.com/fleetform/fleetform/internal/ui"
)

// cpPromotions promotes on a real control plane through the real gates, recording in the
// fleet's hub (as serve's ManualPromotions does).
type cpPromotions struct {
	cp *controlPlane
	p  *promote.Promoter
}

func (c cpPromotions) Review(ctx context.Context) ([]promote.Status, error) {
	cp, err := controlplane.Open(ctx, c.cp.dir, controlplane.Options{})
	if err != nil {
		return nil, err
	}
	return c.p.Review(ctx, cp, time.Now())
}

func (c cpPromotions) Promote(ctx context.Context, env, actor, reason string, override bool, by *hub.Actor) (promote.Result, error) {
	cp, err := controlplane.Open(ctx, c.cp.dir, controlplane.Options{})
	if err != nil {
		return promote.Result{}, err
	}
	return c.p.Promote(ctx, promote.Request{ControlPlane: cp, To: env, Actor: actor, Reason: reason, Override: override, By: by, Now: time.Now()})
}

func TestPromoteFromThePromotionsPage(t *testing.T) {
	f := newFleet(t)
	work := newControlPlane(t)
	// Promotions write their pins to the repository's branch: a bare clone, as serve's is.
	cp := &controlPlane{dir: work.dir + ".git"}
	work.git(t.Context(), t, "clone", "-q", "--bare", work.dir, cp.dir)
	f.web.SetPromotions(cpPromotions{cp: cp, p: &promote.Promoter{Git: gitops.NewWriter(gitops.Options{}), Hub: promote.LocalHub{Hub: f.hub},
		Commit: gitops.CommitOptions{AuthorName: "fleetform", AuthorEmail: "fleetform@localhost"}}})
	c := client(t)
	f.signIn(t, c, adminToken)
	status, page, _ := f.get(t, c, "/promotions", "")
	if status != http.StatusOK || !strings.Contains(page, "Gates") || !strings.Contains(page, "100% of dev's clusters compliant") ||
		!strings.Contains(page, `action="/promotions/promote"`) {
		t.Fatalf("promotions with the control plane: %d\n%s", status, page)
	}
	head := cp.git(t.Context(), t, "rev-parse", "HEAD")
	csrf := csrfOf(t, page)
	if status, _, _ := f.post(t, c, "/promotions/promote", url.Values{"csrf": {csrf}, "environment": {"dev"}}); status != http.StatusBadRequest {
		t.Fatalf("a promotion without a reason: %d, want 400", status)
	}
	status, body, h := f.post(t, c, "/promotions/promote", url.Values{"csrf": {csrf}, "environment": {"dev"}, "reason": {"first release"}})
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "promoted") {
		t.Fatalf("promote dev: %d to %q\n%s", status, h.Get("Location"), body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") == head {
		t.Fatal("promoting dev wrote no pin")
	}
	events, err := f.hub.History(t.Context(), hubPromotions("dev"))
	if err != nil || len(events) == 0 || !strings.Contains(events[0].Message, "first release") {
		t.Fatalf("the promotion is not in the history with its reason: %+v, %v", events, err)
	}

	// stage's gates are not met (dev's clusters report nothing of it): refused, nothing written.
	head = cp.git(t.Context(), t, "rev-parse", "HEAD")
	status, _, h = f.post(t, c, "/promotions/promote", url.Values{"csrf": {csrf}, "environment": {"stage"}, "reason": {"try"}})
	if status != http.StatusSeeOther || !strings.Contains(h.Get("Location"), "not+promoted") || cp.git(t.Context(), t, "rev-parse", "HEAD") != head {
		t.Fatalf("promote stage through unmet gates: %d to %q", status, h.Get("Location"))
	}

	reader := client(t)
	f.signIn(t, reader, f.readToken)
	_, page, _ = f.get(t, reader, "/promotions", "")
	if strings.Contains(page, "/promotions/promote") {
		t.Fatal("a reader sees the promote form")
	}
	if status, _, _ := f.post(t, reader, "/promotions/promote", url.Values{"csrf": {csrfOf(t, page)}, "environment": {"stage"},
		"reason": {"x"}, "override": {"on"}}); status != http.StatusForbidden {
		t.Fatalf("a reader's promotion: %d, want 403", status)
	}
}

// TestPromotionsDrawTheDeclaredChain: the chain is drawn from the control plane's declared
// links, whatever the hub recorded: dev, then stage, then prod, each at its own level and
// only dev at the start, even before anything was promoted into prod.
func TestPromotionsDrawTheDeclaredChain(t *testing.T) {
	f := newFleet(t)
	f.web.SetChain(func(context.Context) ([]ui.ChainLink, error) {
		return []ui.ChainLink{{Env: "dev"}, {Env: "stage", From: "dev"}, {Env: "prod", From: "stage"}}, nil
	})
	c := client(t)
	f.signIn(t, c, adminToken)
	status, page, _ := f.get(t, c, "/promotions", "")
	if status != http.StatusOK {
		t.Fatalf("promotions: %d\n%s", status, page)
	}
	levels := strings.Split(page, `<li class="level">`)[1:]
	var envs []string
	for _, l := range levels {
		for _, env := range []string{"dev", "stage", "prod"} {
			if strings.Contains(l, `data-env="`+env+`"`) {
				envs = append(envs, env)
			}
		}
	}
	if strings.Join(envs, " ") != "dev stage prod" {
		t.Errorf("levels hold %v, want dev, stage, prod, one each", envs)
	}
	if n := strings.Count(page, "start of the chain"); n != 1 || !strings.Contains(page, "promoted from stage") {
		t.Errorf("%d environments at the start of the chain, want dev only; prod from stage:\n%s", n, page)
	}
}

// TestAppPromotionsAreNotPlatformPromotions: an application's promotion into stage (an
// event with its workload) is not what the overview and the Promotions page show as stage's
// platform promotion.
func TestAppPromotionsAreNotPlatformPromotions(t *testing.T) {
	f := newFleet(t)
	ctx := t.Context()
	for _, ev := range []hub.Event{
		{Kind: hub.EventPromotion, Environment: "stage", From: "dev", Revision: "aaaaaaa1111111", Message: "promoted"},
		{Kind: hub.EventPromotion, Environment: "stage", From: "dev", Workload: "hello-world", Revision: "bbbbbbb2222222", Message: "promoted"},
	} {
		if err := f.hub.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	c := client(t)
	f.signIn(t, c, adminToken)
	for _, path := range []string{"/", "/promotions"} {
		_, page, _ := f.get(t, c, path, "")
		if !strings.Contains(page, "aaaaaaa") || strings.Contains(page, "bbbbbbb") {
			t.Errorf("%s shows the app's promotion as stage's platform promotion (want aaaaaaa, not bbbbbbb)", path)
		}
	}
}
