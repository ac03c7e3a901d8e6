package ui_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestScreenshots takes a screenshot of every page of a running UI (make screenshots: the
// demo's serve) into FLEETFORM_SCREENSHOTS_DIR; without it the test is skipped.
func TestScreenshots(t *testing.T) {
	dir, base, token := os.Getenv("FLEETFORM_SCREENSHOTS_DIR"), os.Getenv("FLEETFORM_UI_URL"), os.Getenv("FLEETFORM_UI_TOKEN")
	if dir == "" || base == "" || token == "" {
		t.Skip("make screenshots sets FLEETFORM_SCREENSHOTS_DIR, FLEETFORM_UI_URL and FLEETFORM_UI_TOKEN")
	}
	base = strings.TrimSuffix(base, "/")
	ctx := browser(t)
	shoot := func(name, path string) {
		t.Helper()
		step := within(ctx, t)
		if err := chromedp.Do(step, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		png, err := chromedp.Run(step, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// first is the first link under sel, as a path.
	first := func(path, sel string) string {
		t.Helper()
		step := within(ctx, t)
		if err := chromedp.Do(step, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
			t.Fatal(err)
		}
		a, err := chromedp.Run(step, chromedp.AttributeValue(chromedp.CSS(sel), "href"))
		if err != nil || !a.Exists {
			t.Fatalf("no link %s on %s: %v", sel, path, err)
		}
		return a.Value
	}
	shoot("signin", "/signin")
	if err := signInWith(within(ctx, t), base, "/", token); err != nil {
		t.Fatal(err)
	}
	shoot("overview", "/")
	shoot("environment", "/environments/dev")
	shoot("workload", first("/", `tr[data-workload] th a`))
	shoot("cluster-type", first("/environments/dev", `a[href^="/cluster-types/"]`))
	shoot("cluster", first(first("/environments/dev", `a[href^="/cluster-types/"]`), `a[href^="/clusters/"]`))
	shoot("clusters", "/clusters?environment=dev&name=vm-line")
	shoot("diff", "/diff?from=dev&to=stage")
	shoot("promotions", "/promotions")
	shoot("explain", first(first("/environments/dev", `a[href^="/cluster-types/"]`), `a.why`))
	shoot("author", "/author")
}
