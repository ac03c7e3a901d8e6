package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fleetform/fleetform/internal/hub"
)

// chromium returns the browser to drive, or skips the test when there is none (it fails
// instead when FLEETFORM_REQUIRE_CHROMIUM=1, as CI sets it).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("FLEETFORM_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("FLEETFORM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no Chromium: install Debian's chromium package (FLEETFORM_REQUIRE_CHROMIUM=1)")
	}
	t.Skip("no Chromium on this machine (Debian's chromium package; FLEETFORM_CHROMIUM names another)")
	return ""
}

// browser starts headless Chromium with a fresh profile and no background networking.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1400, 1000),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// signInWith goes to path, is sent to the sign-in form, signs in with token and lands on path.
func signInWith(ctx context.Context, base, path, token string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(base+path),
		chromedp.WaitVisible(chromedp.CSS(`#token`)),
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Submit(chromedp.CSS(`#token`)),
		chromedp.WaitVisible(chromedp.CSS(`nav .who`)),
	)
}

// within bounds one step of a browser test, so that a page that never shows what is awaited
// fails that step instead of the test's whole budget.
func within(ctx context.Context, t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestBrowser(t *testing.T) {
	f := newFleet(t)
	cp := newControlPlane(t)
	f.web.SetChanges(cp)
	sy := &syncer{}
	f.web.SetSyncer(sy)
	browserCtx := browser(t)
	base := f.srv.URL

	t.Run("sign-in lands on the page asked for, the overview's counts are the API's", func(t *testing.T) {
		ctx := within(browserCtx, t)
		if err := signInWith(ctx, base, "/", adminToken); err != nil {
			t.Fatal(err)
		}
		if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || loc != base+"/" {
			t.Fatalf("after sign-in at %q (%v)", loc, err)
		}
		for _, env := range []string{"dev", "stage", "prod"} {
			want := apiCounts(ctx, t, f, env)
			for wl, w := range want {
				sel := chromedp.CSS(fmt.Sprintf(`tr[data-workload=%q] td[data-env=%q]`, wl, env))
				attrs, err := chromedp.Run(ctx, chromedp.Attributes(sel))
				if err != nil {
					t.Fatalf("%s in %s: %v", wl, env, err)
				}
				if compliant, intended := attrs["data-compliant"], attrs["data-intended"]; compliant+"/"+intended != w {
					t.Errorf("%s in %s: the page shows %s/%s, the API %s", wl, env, compliant, intended, w)
				}
			}
		}
	})

	t.Run("compare stage with prod", func(t *testing.T) {
		ctx := within(browserCtx, t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/diff"),
			chromedp.SetValue(chromedp.CSS(`select[name=from]`), "stage"),
			chromedp.SetValue(chromedp.CSS(`select[name=to]`), "prod"),
			chromedp.Click(chromedp.CSS(`form.pick button`)),
			chromedp.WaitVisible(chromedp.CSS(`table.diff`)))
		if err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`table.diff`)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, "REPLICAS") || strings.Contains(text, "map[") {
			t.Fatalf("diff table:\n%s", text)
		}
	})

	t.Run("an approval from the promotions page", func(t *testing.T) {
		ctx := within(browserCtx, t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/promotions"),
			chromedp.WaitVisible(chromedp.CSS(`form.approve input[name=reason]`)),
			chromedp.SendKeys(chromedp.CSS(`form.approve input[name=reason]`), "soaked long enough"),
			chromedp.Click(chromedp.CSS(`form.approve button`)),
			chromedp.WaitVisible(chromedp.CSS(`p.done`)))
		if err != nil {
			t.Fatal(err)
		}
		done, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.done`)))
		if err != nil {
			t.Fatal(err)
		}
		ok, err := f.hub.Approved(ctx, "stage", "c0ffee1111111111111111111111111111111111")
		if err != nil || !ok || !strings.Contains(done, "stage") {
			t.Fatalf("approved %v (%v), page says %q", ok, err, done)
		}
	})

	t.Run("a form without its CSRF token is refused", func(t *testing.T) {
		ctx := within(browserCtx, t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/promotions"),
			chromedp.WaitVisible(chromedp.CSS(`form.approve`)),
			chromedp.SetAttributeValue(chromedp.CSS(`form.approve input[name=csrf]`), "value", "forged"),
			chromedp.SendKeys(chromedp.CSS(`form.approve input[name=reason]`), "forged"),
			chromedp.Click(chromedp.CSS(`form.approve button`)),
			chromedp.WaitVisible(chromedp.CSS(`p.problem`)))
		if err != nil {
			t.Fatal(err)
		}
		status, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(`p.problem`), "data-status"))
		if err != nil {
			t.Fatal(err)
		}
		if status.Value != strconv.Itoa(http.StatusForbidden) {
			t.Fatalf("status %q, want 403", status.Value)
		}
		events, _ := f.hub.Approvals(ctx, "stage")
		if len(events) != 1 {
			t.Fatalf("approvals after a forged form: %d, want the one before", len(events))
		}
	})

	t.Run("an authoring form previews the change, then commits it", func(t *testing.T) {
		ctx := within(browserCtx, t)
		head := cp.git(ctx, t, "rev-parse", "HEAD")
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/author"),
			chromedp.WaitVisible(chromedp.CSS(`#form-cluster-type`)),
			chromedp.SendKeys(chromedp.CSS(`#form-cluster-type input[name=name]`), "plant-lyon"),
			chromedp.SendKeys(chromedp.CSS(`#form-cluster-type input[name=labels]`), "site=lyon"),
			chromedp.Click(chromedp.CSS(`#form-cluster-type button`)),
			chromedp.WaitVisible(chromedp.CSS(`form.confirm button`)))
		if err != nil {
			t.Fatal(err)
		}
		plan, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`main`)))
		if err != nil || !strings.Contains(plan, "add ClusterType plant-lyon in dev") || !strings.Contains(plan, "What it does to the fleet") {
			t.Fatalf("preview (%v):\n%s", err, plan)
		}
		if cp.git(ctx, t, "rev-parse", "HEAD") != head {
			t.Fatal("the preview committed")
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`form.confirm button`)), chromedp.WaitVisible(chromedp.CSS(`ul.commits`))); err != nil {
			t.Fatal(err)
		}
		if got := cp.git(ctx, t, "show", "HEAD:environments/dev/cluster-types/plant-lyon.yaml"); !strings.Contains(got, "site: lyon") {
			t.Fatalf("committed:\n%s", got)
		}
	})

	t.Run("a refused form keeps what was typed, in a page no wider than the window", func(t *testing.T) {
		ctx := within(browserCtx, t)
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/author"),
			chromedp.WaitVisible(chromedp.CSS(`#form-policy`)),
			chromedp.SendKeys(chromedp.CSS(`#form-policy input[name=name]`), "east-tests"),
			chromedp.SendKeys(chromedp.CSS(`#form-policy input[name=types_text]`), "region in (east,"),
			chromedp.Click(chromedp.CSS(`#form-policy button`)),
			chromedp.WaitVisible(chromedp.CSS(`#form-policy [data-status=refused]`)))
		if err != nil {
			t.Fatal(err)
		}
		for field, want := range map[string]string{"name": "east-tests", "types_text": "region in (east,"} {
			if got, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS(`#form-policy input[name=`+field+`]`))); err != nil || got != want {
				t.Errorf("%s after the refusal: %q (%v), want %q", field, got, err, want)
			}
		}
		fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
		if err != nil || !fits {
			t.Errorf("the forms page is wider than the window (%v)", err)
		}
	})

	t.Run("the operator's pages: clusters found, compare proposed, an environment's promotions, sync now", func(t *testing.T) {
		ctx := within(browserCtx, t)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/clusters?environment=dev"), // what the form asks for (a GET)
			chromedp.WaitVisible(chromedp.CSS(`table.clusters`))); err != nil {
			t.Fatal(err)
		}
		selected, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('select[name=environment]').value`))
		if err != nil || selected != "dev" {
			t.Fatalf("the form shows environment %q (%v), want dev", selected, err)
		}
		rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll('table.clusters tbody tr td:nth-child(2)')].map(td => td.textContent)`))
		if err != nil || len(rows) == 0 || slices.ContainsFunc(rows, func(env string) bool { return env != "dev" }) {
			t.Fatalf("clusters of dev: %v, %v", rows, err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/diff"), chromedp.WaitVisible(chromedp.CSS(`form.pick`))); err != nil {
			t.Fatal(err)
		}
		proposed, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`document.querySelector('select[name=from]').value + ' -> ' + document.querySelector('select[name=to]').value`))
		if err != nil || proposed != "dev -> stage" {
			t.Fatalf("Compare proposes %q (%v), want dev -> stage", proposed, err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate(base+"/environments/prod"), chromedp.WaitVisible(chromedp.CSS(`table.promotions-history`)),
			chromedp.Click(chromedp.CSS(`form.sync button`)), chromedp.WaitVisible(chromedp.CSS(`p.done`))); err != nil {
			t.Fatal(err)
		}
		refreshes, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('meta[http-equiv=refresh]') !== null`))
		if err != nil || !refreshes || !slices.Equal(sy.asked(), []string{"prod"}) {
			t.Fatalf("prod's page: reloads itself %v (%v), synced %v", refreshes, err, sy.asked())
		}
	})

	t.Run("a read-only user sees no write controls", func(t *testing.T) {
		ctx := within(browserCtx, t)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/"),
			chromedp.Click(chromedp.CSS(`nav form button`)),
			chromedp.WaitVisible(chromedp.CSS(`#token`))); err != nil {
			t.Fatal(err)
		}
		if err := signInWith(ctx, base, "/promotions", f.readToken); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`ol.chain`))); err != nil {
			t.Fatal(err)
		}
		forms, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('form.approve').length`))
		if err != nil {
			t.Fatal(err)
		}
		if forms != 0 {
			t.Fatalf("%d approve forms shown to a read-only user", forms)
		}
	})
}

// apiCounts reads an environment's rollout from the API and sums, per workload, the
// compliant and intended clusters of its targets ("compliant/intended").
func apiCounts(ctx context.Context, t *testing.T, f *fleet, env string) map[string]string {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.srv.URL+"/api/v1/environments/"+env+"/rollout", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+f.readToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var ro hub.Rollout
	if err := json.NewDecoder(resp.Body).Decode(&ro); err != nil {
		t.Fatal(err)
	}
	sums := map[string][2]int{}
	for _, tr := range ro.Targets {
		s := sums[tr.Workload]
		sums[tr.Workload] = [2]int{s[0] + tr.Compliant, s[1] + tr.Clusters}
	}
	out := map[string]string{}
	for wl, s := range sums {
		out[wl] = fmt.Sprintf("%d/%d", s[0], s[1])
	}
	return out
}
