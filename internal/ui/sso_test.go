package ui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
	"github.com/fleetform/fleetform/internal/identity"
	"github.com/fleetform/fleetform/internal/testutil/oidctest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
	"github.com/fleetform/fleetform/internal/ui"
)

const teamsPolicy = `
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: payments
      subjects: [{group: payments-devs}]
      allow: [{action: author, workspaces: [payments]}, {action: approve, environments: [dev]}]
    - name: platform
      subjects: [{group: platform-engineers}]
      allow: [{action: author, platform: true}, {action: approve, environments: ["*"]}]
`

// clock is a settable clock for sessions' expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// ssoFleet is a hub with the UI and the API on one server, people signing in through a
// real OpenID provider.
type ssoFleet struct {
	*fleet
	idp   *oidctest.Provider
	clock *clock
}

func newSSOFleet(t *testing.T, disableTokens bool) *ssoFleet {
	t.Helper()
	ctx := context.Background()
	idp, err := oidctest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idp.Close() })
	store, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "hub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	var ap v1alpha1.AccessPolicy
	if err := yaml.Unmarshal([]byte(teamsPolicy), &ap); err != nil {
		t.Fatal(err)
	}
	rights := access.NewRights()
	for _, env := range []string{"", "dev", "stage", "prod"} {
		if env == "" {
			rights.SetTip(access.Compile([]*v1alpha1.AccessPolicy{&ap}))
			continue
		}
		rights.SetEnvironment(env, access.Compile([]*v1alpha1.AccessPolicy{&ap}))
	}
	f := &ssoFleet{idp: idp, clock: &clock{now: time.Now()}, fleet: &fleet{}}
	mux := http.NewServeMux()
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	cfg := identity.Config{Issuer: idp.Issuer(), ClientID: idp.ClientID(), ClientSecret: idp.ClientSecret(), ExternalURL: f.srv.URL}
	f.hub = hub.New(store, hub.Options{People: identity.NewVerifier(cfg), Now: f.clock.Now})
	if _, err := f.hub.Bootstrap(ctx, adminToken); err != nil {
		t.Fatal(err)
	}
	storetest.RunHub(t, f.hub)
	f.web, err = ui.New(f.hub, ui.Options{Rights: rights, SignIn: identity.NewSignIn(cfg), Sealer: identity.NewSealer("replicas share this"),
		DisableTokenSignIn: disableTokens, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle("/", ui.Mount(api.New(f.hub, api.Options{Rights: rights}), f.web))
	return f
}

// ssoSignIn signs c in through the provider as the browser would, starting at path, and
// returns the page the browser lands on.
func (f *ssoFleet) ssoSignIn(t *testing.T, c *http.Client, path string, who oidctest.Person) string {
	t.Helper()
	f.idp.SignsIn(who)
	status, _, h := f.get(t, c, path, "")
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), "/signin?next=") {
		t.Fatalf("%s without a session: %d to %q", path, status, h.Get("Location"))
	}
	_, body, _ := f.get(t, c, h.Get("Location"), "")
	login := ssoLinkRE.FindStringSubmatch(body)
	if login == nil {
		t.Fatalf("the sign-in page offers no single sign-on:\n%s", body)
	}
	status, _, h = f.get(t, c, strings.ReplaceAll(login[1], "&amp;", "&"), "")
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), f.idp.Issuer()) {
		t.Fatalf("/auth/login: %d to %q, want the provider", status, h.Get("Location"))
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, h.Get("Location"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req) // the provider signs the queued person in
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	callback := resp.Header.Get("Location")
	if !strings.HasPrefix(callback, f.srv.URL+"/auth/callback?") {
		t.Fatalf("the provider sent the browser to %q", callback)
	}
	status, body, _ = f.get(t, c, strings.TrimPrefix(callback, f.srv.URL), "")
	if status != http.StatusOK || !strings.Contains(body, `content="0;url=`+path+`"`) {
		t.Fatalf("callback: %d\n%s", status, body)
	}
	status, body, _ = f.get(t, c, path, "")
	if status != http.StatusOK {
		t.Fatalf("%s after signing in: %d", path, status)
	}
	return body
}

var ssoLinkRE = regexp.MustCompile(`id="sso" href="([^"]+)"`)

var (
	pat = oidctest.Person{Subject: "u-pat", Email: "pat@contoso.com", Name: "Pat", Groups: []string{"payments-devs"}}
	sam = oidctest.Person{Subject: "u-sam", Email: "sam@contoso.com", Name: "Sam", Groups: []string{"platform-engineers"}}
)

func TestSingleSignOn(t *testing.T) {
	f := newSSOFleet(t, false)
	c := client(t)
	body := f.ssoSignIn(t, c, "/promotions", pat)
	if !strings.Contains(body, "Pat &lt;pat@contoso.com&gt;") {
		t.Fatalf("the navigation bar does not name the person:\n%s", body)
	}
	_, me, _ := f.get(t, c, "/me", "")
	for _, want := range []string{"payments-devs", "<td>payments</td>", f.idp.Issuer(), "u-pat"} {
		if !strings.Contains(me, want) {
			t.Errorf("/me lacks %q:\n%s", want, me)
		}
	}
	if !strings.Contains(body, `href="/author"`) {
		t.Error("a team member who may author sees no Change link")
	}

	// A POST needs the session's CSRF token; signing out ends the session.
	if status, _, _ := f.post(t, c, "/auth/logout", url.Values{}); status != http.StatusForbidden {
		t.Fatalf("logout without its CSRF token: %d", status)
	}
	if status, _, h := f.post(t, c, "/auth/logout", url.Values{"csrf": {csrfOf(t, me)}}); status != http.StatusSeeOther || h.Get("Location") != "/signin" {
		t.Fatalf("logout: %d to %q", status, h.Get("Location"))
	}
	if status, _, _ := f.get(t, c, "/", ""); status != http.StatusSeeOther {
		t.Fatalf("after logout: %d", status)
	}
}

func TestSingleSignOnExpiryIsCheckedAgain(t *testing.T) {
	f := newSSOFleet(t, false)
	f.idp.SetLifetime(5 * time.Minute)
	c := client(t)
	f.ssoSignIn(t, c, "/", sam)
	f.clock.add(6 * time.Minute)
	status, _, h := f.get(t, c, "/promotions", "")
	if status != http.StatusSeeOther || h.Get("Location") != "/auth/login?next=%2Fpromotions" {
		t.Fatalf("an expired session: %d to %q, want the provider again", status, h.Get("Location"))
	}
}

func TestSingleSignOnRefusals(t *testing.T) {
	f := newSSOFleet(t, true)
	c := client(t)
	// A callback nobody started here.
	status, body, _ := f.get(t, c, "/auth/callback?state=x&code=y", "")
	if status != http.StatusUnauthorized || !strings.Contains(body, "not started here") {
		t.Fatalf("an unsolicited callback: %d\n%s", status, body)
	}
	if events, err := f.hub.History(context.Background(), hub.HistoryFilter{Kind: hub.EventSignIn}); err != nil || len(events) != 0 {
		t.Fatalf("a callback anyone can send is recorded: %+v, %v", events, err)
	}
	// The provider's error is shown, not a session made.
	if status, _, _ := f.get(t, c, "/auth/login?next=/", ""); status != http.StatusSeeOther {
		t.Fatalf("/auth/login: %d", status)
	}
	status, body, _ = f.get(t, c, "/auth/callback?error=access_denied&error_description=no+access&state=x", "")
	if status != http.StatusUnauthorized || !strings.Contains(body, "access_denied: no access") {
		t.Fatalf("the provider's refusal: %d\n%s", status, body)
	}
	events, err := f.hub.History(context.Background(), hub.HistoryFilter{Kind: hub.EventSignIn})
	if err != nil || len(events) != 1 || !strings.Contains(events[0].Message, "access_denied") {
		t.Fatalf("the failed sign-in is not in the history: %+v, %v", events, err)
	}
	// Token sign-in is switched off: no form, and a POST is refused.
	_, body, _ = f.get(t, c, "/signin", "")
	if strings.Contains(body, `id="token"`) || !strings.Contains(body, `id="sso"`) {
		t.Fatalf("with token sign-in off, the page still offers it:\n%s", body)
	}
	signInURL, _ := url.Parse(f.srv.URL + "/signin")
	var formCSRF string
	for _, ck := range c.Jar.Cookies(signInURL) {
		if ck.Name == "fleetform_signin" {
			formCSRF = ck.Value
		}
	}
	status, body, _ = f.post(t, c, "/signin", url.Values{"csrf": {formCSRF}, "token": {adminToken}})
	if status != http.StatusForbidden || !strings.Contains(body, "switched off") {
		t.Fatalf("a token sign-in when switched off: %d\n%s", status, body)
	}
}

func TestPeopleBearerTokensOnTheAPI(t *testing.T) {
	f := newSSOFleet(t, false)
	other, err := oidctest.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	c := client(t)
	tok, err := f.idp.Token("u-sam", f.idp.ClientID(), time.Minute, map[string]any{"email": "sam@contoso.com", "groups": []string{"platform-engineers"}})
	if err != nil {
		t.Fatal(err)
	}
	if status, body, _ := f.get(t, c, "/api/v1/environments", tok); status != http.StatusOK {
		t.Fatalf("a person's bearer on the API: %d %s", status, body)
	}
	foreign, err := other.Token("u-sam", f.idp.ClientID(), time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	if status, body, _ := f.get(t, c, "/api/v1/environments", foreign); status != http.StatusUnauthorized || !strings.Contains(body, "not trusted") {
		t.Fatalf("another issuer's token: %d %s", status, body)
	}
	// A person may approve where a role allows it, recorded as themselves.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, f.srv.URL+"/api/v1/approvals",
		strings.NewReader(`{"environment":"prod","commit":"c0ffee"}`))
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	if status, body, _ := do(t, c, req); status != http.StatusCreated || !strings.Contains(body, `"by":"sam@contoso.com"`) {
		t.Fatalf("approving as a platform engineer: %d %s", status, body)
	}
}

// TestBrowserSingleSignOn: the whole code flow in headless Chromium, from a page asked for
// to that page, signed in as the person the provider vouches for.
func TestBrowserSingleSignOn(t *testing.T) {
	f := newSSOFleet(t, false)
	ctx := within(browser(t), t)
	f.idp.SignsIn(pat)
	err := chromedp.Do(ctx,
		chromedp.Navigate(f.srv.URL+"/promotions"),
		chromedp.WaitVisible(chromedp.CSS(`#sso`)),
		chromedp.Click(chromedp.CSS(`#sso`)),
		chromedp.WaitVisible(chromedp.CSS(`nav .who`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	who, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`nav .who`)))
	if err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if who != "Pat <pat@contoso.com>" || loc != f.srv.URL+"/promotions" {
		t.Fatalf("signed in as %q at %q", who, loc)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`nav .who`)), chromedp.WaitVisible(chromedp.CSS(`table.facts`))); err != nil {
		t.Fatal(err)
	}
	roles, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`table.facts`)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(roles, "payments") {
		t.Fatalf("who am I shows no role:\n%s", roles)
	}
}
