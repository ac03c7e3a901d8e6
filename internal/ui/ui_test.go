package ui_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
)

// client is a browser-like HTTP client: it keeps cookies and does not follow redirects.
func client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// get fetches a page with a bearer token ("" for none) and returns its status and body.
func (f *fleet) get(t *testing.T, c *http.Client, path, token string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, f.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return do(t, c, req)
}

// post sends a form and returns the status and body.
func (f *fleet) post(t *testing.T, c *http.Client, path string, form url.Values) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, f.srv.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return do(t, c, req)
}

// do sends req and returns the response's status, body and headers.
func do(t *testing.T, c *http.Client, req *http.Request) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body), resp.Header
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, body string) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", body)
	}
	return m[1]
}

// signIn signs c in with token through the sign-in form.
func (f *fleet) signIn(t *testing.T, c *http.Client, token string) {
	t.Helper()
	_, body, _ := f.get(t, c, "/signin?next=/promotions", "")
	status, _, h := f.post(t, c, "/signin", url.Values{"csrf": {csrfOf(t, body)}, "token": {token}, "next": {"/promotions"}})
	if status != http.StatusSeeOther || h.Get("Location") != "/promotions" {
		t.Fatalf("sign-in: %d to %q", status, h.Get("Location"))
	}
}

func TestOverviewCountsMatchTheRollout(t *testing.T) {
	f := newFleet(t)
	status, body, h := f.get(t, client(t), "/", f.readToken)
	if status != http.StatusOK {
		t.Fatalf("GET /: %d\n%s", status, body)
	}
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") {
		t.Fatalf("content type %q", h.Get("Content-Type"))
	}
	// Environments in promotion order, as the recorded promotions imply.
	if i, j, k := strings.Index(body, `data-env="dev"`), strings.Index(body, `data-env="stage"`), strings.Index(body, `data-env="prod"`); i >= j || j >= k {
		t.Fatalf("environment order dev %d, stage %d, prod %d", i, j, k)
	}
	want := map[string]string{
		"shop/dev": "4/6", "billing/dev": "2/2", "shop/stage": "1/1", "shop/prod": "1/2",
	}
	cellRE := regexp.MustCompile(`(?s)<tr data-workload="([^"]+)">(.*?)</tr>`)
	countRE := regexp.MustCompile(`data-env="([^"]+)" data-compliant="(\d+)" data-intended="(\d+)"`)
	got := map[string]string{}
	for _, row := range cellRE.FindAllStringSubmatch(body, -1) {
		for _, c := range countRE.FindAllStringSubmatch(row[2], -1) {
			got[row[1]+"/"+c[1]] = c[2] + "/" + c[3]
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	// Against the API's answer: per environment, compliant and intended summed per cluster type.
	ro, err := f.hub.Rollout(context.Background(), "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(ro.Targets) != 1 || ro.Targets[0].Compliant != 1 || ro.Targets[0].Clusters != 2 {
		t.Fatalf("prod rollout %+v", ro.Targets)
	}
	for _, s := range []string{"1.4.2", "waiting: c0ffee1", "needs an approval", "promoted beef222", "1 waiting for platform configuration"} {
		if !strings.Contains(body, s) {
			t.Errorf("the overview lacks %q", s)
		}
	}
}

func TestPagesAnswerAndLinkEachOther(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	pages := map[string][]string{
		"/environments/dev":        {"dev-s4", "Silent", `href="/cluster-types/dev/small"`, "https://github.com/org/gitops/commit/"},
		"/workloads/shop":          {"shop-dev", "shop-prod", "1.4.1", "REPLICAS", "host: db", "× became Ready"},
		"/cluster-types/dev/large": {"billing-dev", "dev-l1", "pool: 5"},
		"/clusters/dev-s3":         {"NonCompliant", "shop-dev", "Failed"},
		"/diff?from=stage&to=prod": {"REPLICAS", "differ by the environment"},
		"/promotions":              {"start of the chain", "promoted from dev", "needs an approval"},
		"/environments/dev?page=1": {"shop-dev"},
		"/diff":                    {"Compare"},
		"/static/ui.css":           {".bar"},
	}
	for path, wants := range pages {
		status, body, _ := f.get(t, c, path, adminToken)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d\n%s", path, status, body)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s lacks %q", path, w)
			}
		}
		if strings.Contains(body, "secret-pat") || strings.Contains(body, adminToken) || strings.Contains(body, "map[") {
			t.Errorf("GET %s shows a secret or Go's map notation", path)
		}
	}
	for _, path := range []string{"/environments/nowhere", "/workloads/nothing", "/clusters/ghost", "/cluster-types/dev/nope", "/diff?from=dev&to=nowhere"} {
		if status, _, _ := f.get(t, c, path, adminToken); status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
}

func TestSignInSessionAndCSRF(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	status, _, h := f.get(t, c, "/workloads/shop?x=1", "")
	if status != http.StatusSeeOther || h.Get("Location") != "/signin?next="+url.QueryEscape("/workloads/shop?x=1") {
		t.Fatalf("unsigned GET: %d to %q", status, h.Get("Location"))
	}
	_, form, _ := f.get(t, c, "/signin", "")
	if status, _, _ := f.post(t, c, "/signin", url.Values{"token": {adminToken}}); status != http.StatusForbidden {
		t.Fatalf("sign-in without CSRF: %d, want 403", status)
	}
	if status, body, _ := f.post(t, c, "/signin", url.Values{"csrf": {csrfOf(t, form)}, "token": {"wrong"}}); status != http.StatusUnauthorized ||
		!strings.Contains(body, "does not accept") {
		t.Fatalf("sign-in with a wrong token: %d\n%s", status, body)
	}
	status, _, h = f.post(t, c, "/signin", url.Values{"csrf": {csrfOf(t, form)}, "token": {adminToken}, "next": {"//evil.example/x"}})
	if status != http.StatusSeeOther || h.Get("Location") != "/" {
		t.Fatalf("sign-in: %d to %q (an off-site next must become /)", status, h.Get("Location"))
	}
	cookie := h.Get("Set-Cookie")
	for _, attr := range []string{"fleetform_session=", "HttpOnly", "SameSite=Strict", "Path=/"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("session cookie %q lacks %s", cookie, attr)
		}
	}
	status, body, h := f.get(t, c, "/promotions", "")
	if status != http.StatusOK || !strings.Contains(body, `action="/promotions/approve"`) {
		t.Fatalf("signed-in admin: %d, approve form shown: %v", status, strings.Contains(body, "/promotions/approve"))
	}
	csp := h.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) || strings.Contains(csp, "script-src") {
			t.Errorf("CSP %q: wants %s and no script source", csp, d)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, " style=") {
		t.Error("a page carries inline script or style")
	}
	approval := url.Values{"environment": {"stage"}, "commit": {"c0ffee1111111111111111111111111111111111"}, "reason": {"tested by hand"}}
	if status, _, _ := f.post(t, c, "/promotions/approve", approval); status != http.StatusForbidden {
		t.Fatalf("approval without CSRF: %d, want 403", status)
	}
	approval.Set("csrf", "forged")
	if status, _, _ := f.post(t, c, "/promotions/approve", approval); status != http.StatusForbidden {
		t.Fatalf("approval with a forged CSRF token: %d, want 403", status)
	}
	if ok, _ := f.hub.Approved(context.Background(), "stage", "c0ffee1111111111111111111111111111111111"); ok {
		t.Fatal("a refused POST recorded an approval")
	}
	approval.Set("csrf", csrfOf(t, body))
	if status, _, h := f.post(t, c, "/promotions/approve", approval); status != http.StatusSeeOther || h.Get("Location") != "/promotions?done=approval+recorded+for+stage" {
		t.Fatalf("approval: %d to %q", status, h.Get("Location"))
	}
	events, err := f.hub.Approvals(context.Background(), "stage")
	if err != nil || len(events) != 1 || events[0].Message != "approved by admin: tested by hand" {
		t.Fatalf("approvals %+v, %v", events, err)
	}
	if status, _, _ := f.post(t, c, "/signout", url.Values{"csrf": {csrfOf(t, body)}}); status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", status)
	}
	if status, _, _ := f.get(t, c, "/", ""); status != http.StatusSeeOther {
		t.Fatalf("after sign-out: %d, want a redirect to sign in", status)
	}
}

func TestReadOnlyTokensSeeNoWriteControls(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	f.signIn(t, c, f.readToken)
	_, body, _ := f.get(t, c, "/promotions", "")
	if strings.Contains(body, "/promotions/approve") {
		t.Fatal("a read-only session sees the approve form")
	}
	status, _, _ := f.post(t, c, "/promotions/approve", url.Values{"csrf": {csrfOf(t, body)}, "environment": {"stage"},
		"commit": {"c0ffee1111111111111111111111111111111111"}, "reason": {"x"}})
	if status != http.StatusForbidden {
		t.Fatalf("read-only approval: %d, want 403", status)
	}
	if ok, _ := f.hub.Approved(context.Background(), "stage", "c0ffee1111111111111111111111111111111111"); ok {
		t.Fatal("a read-only POST recorded an approval")
	}
	if strings.Contains(body, f.readToken) {
		t.Fatal("the page shows the session's token")
	}
}

func TestClusterTokensAndBadTokensAreRefused(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	tok, err := f.hub.RegisterCluster(context.Background(), hub.Cluster{Name: "edge-x", Environment: "dev", ClusterType: "small"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if status, _, _ := f.get(t, c, "/", tok); status != http.StatusForbidden {
		t.Fatalf("a cluster token: %d, want 403", status)
	}
	if status, _, _ := f.get(t, c, "/", "nope"); status != http.StatusUnauthorized {
		t.Fatalf("an unknown bearer token: %d, want 401", status)
	}
	// The API keeps answering JSON under /api/.
	status, body, h := f.get(t, c, "/api/v1/environments", adminToken)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "application/json") || !strings.Contains(body, "stage") {
		t.Fatalf("API through the UI's mux: %d %q %s", status, h.Get("Content-Type"), body)
	}
}

// TestSessionsAreKeptByTheHub: a session cookie is a random secret of its own (never the
// hub token), listed as a token of kind session; signing out ends it on the server (a copy
// of the cookie stops working), and so do revoking it and revoking the hub token it signed
// in with; it is no bearer token for the API.
func TestSessionsAreKeptByTheHub(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	c := client(t)
	f.signIn(t, c, f.readToken)
	secret := f.sessionSecret(t, c)
	if secret == "" || strings.Contains(secret, f.readToken) {
		t.Fatalf("session cookie %q holds the hub token", secret)
	}
	sessions := f.activeSessions(t)
	if len(sessions) != 1 {
		t.Fatalf("active sessions %+v, want 1", sessions)
	}
	all, err := f.hub.Tokens(ctx, hub.TokenFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range all {
		if tok.Kind == hub.TokenSession {
			t.Errorf("token list shows session %s without --kind session", tok.ID)
		}
	}
	if _, err := f.hub.Authenticate(ctx, secret); hub.ErrorCode(err) != hub.CodeUnauthorized {
		t.Errorf("the session's secret as a bearer token: %v", err)
	}

	stolen := f.clientWith(t, secret)
	if status, _, _ := f.get(t, stolen, "/promotions", ""); status != http.StatusOK {
		t.Fatalf("a copy of the cookie before sign-out: %d", status)
	}
	_, body, _ := f.get(t, c, "/promotions", "")
	if status, _, _ := f.post(t, c, "/signout", url.Values{"csrf": {csrfOf(t, body)}}); status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", status)
	}
	if status, _, _ := f.get(t, stolen, "/promotions", ""); status != http.StatusSeeOther {
		t.Fatalf("a copy of the cookie after sign-out: %d, want a redirect to sign in", status)
	}
	if left := f.activeSessions(t); len(left) != 0 {
		t.Fatalf("sessions after sign-out %+v", left)
	}

	f.signIn(t, c, f.readToken)
	if _, err := f.hub.RevokeToken(ctx, f.activeSessions(t)[0].ID); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := f.get(t, c, "/promotions", ""); status != http.StatusSeeOther {
		t.Fatalf("a revoked session: %d, want a redirect to sign in", status)
	}

	f.signIn(t, c, f.readToken)
	if _, err := f.hub.RevokeToken(ctx, hub.TokenID(hub.HashToken(f.readToken))); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := f.get(t, c, "/promotions", ""); status != http.StatusSeeOther {
		t.Fatalf("a session of a revoked token: %d, want a redirect to sign in", status)
	}
}

// sessionSecret is c's session cookie.
func (f *fleet) sessionSecret(t *testing.T, c *http.Client) string {
	t.Helper()
	u, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == "fleetform_session" {
			return ck.Value
		}
	}
	return ""
}

// clientWith is a client holding the session cookie secret (a copy of another browser's).
func (f *fleet) clientWith(t *testing.T, secret string) *http.Client {
	t.Helper()
	c := client(t)
	u, err := url.Parse(f.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c.Jar.SetCookies(u, []*http.Cookie{{Name: "fleetform_session", Value: secret, Path: "/"}})
	return c
}

// activeSessions lists the hub's active sessions.
func (f *fleet) activeSessions(t *testing.T) []hub.TokenInfo {
	t.Helper()
	ts, err := f.hub.Tokens(context.Background(), hub.TokenFilter{Kind: hub.TokenSession})
	if err != nil {
		t.Fatal(err)
	}
	var active []hub.TokenInfo
	for _, tok := range ts {
		if tok.State == hub.TokenActive {
			active = append(active, tok)
		}
	}
	return active
}

// TestMassDeletionConfirmedFromTheEnvironmentPage: when the last sync of an environment
// refused a mass deletion, its page offers whoever may override there a form to confirm it
// (a reader sees none, and a POST of theirs is refused); the confirmation is recorded in the
// history with the refused commit and the reason.
func TestMassDeletionConfirmedFromTheEnvironmentPage(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	commit := strings.Repeat("ab", 20)
	if err := f.hub.RecordSync(ctx, hub.SyncRecord{Environment: "dev", ControlPlaneCommit: commit, Trigger: hub.TriggerPoll,
		Error: hub.MassDeletionRefused + "applying control-plane commit " + commit[:12] + " would remove 5 of 6 deployment-target folders"}); err != nil {
		t.Fatal(err)
	}
	reader := client(t)
	f.signIn(t, reader, f.readToken)
	_, page, _ := f.get(t, reader, "/environments/dev", "")
	if strings.Contains(page, "/environments/dev/mass-deletion") {
		t.Error("a reader is offered the confirmation")
	}
	form := url.Values{"csrf": {csrfOf(t, page)}, "commit": {commit}, "reason": {"retiring the edge sites"}}
	if status, _, _ := f.post(t, reader, "/environments/dev/mass-deletion", form); status != http.StatusForbidden {
		t.Errorf("a reader's confirmation: %d, want 403", status)
	}

	admin := client(t)
	f.signIn(t, admin, adminToken)
	_, page, _ = f.get(t, admin, "/environments/dev", "")
	if !strings.Contains(page, `action="/environments/dev/mass-deletion"`) || !strings.Contains(page, `name="commit" value="`+commit+`"`) {
		t.Fatalf("the admin is not offered the confirmation:\n%s", page)
	}
	form.Set("csrf", csrfOf(t, page))
	status, _, h := f.post(t, admin, "/environments/dev/mass-deletion", form)
	if status != http.StatusSeeOther || h.Get("Location") != "/environments/dev?confirmed="+commit {
		t.Fatalf("confirmation: %d to %q", status, h.Get("Location"))
	}
	if ok, err := f.hub.MassDeletionConfirmed(ctx, "dev", commit); err != nil || !ok {
		t.Fatalf("confirmed: %v, %v", ok, err)
	}
	events, err := f.hub.History(ctx, hub.HistoryFilter{Environment: "dev", Kind: hub.EventMassDeletion})
	if err != nil || len(events) != 1 || !strings.Contains(events[0].Message, ": retiring the edge sites") || events[0].Actor == nil {
		t.Errorf("history %+v, %v", events, err)
	}
	if _, page, _ = f.get(t, admin, "/environments/dev?confirmed="+commit, ""); !strings.Contains(page, "Your confirmation is recorded") {
		t.Errorf("the page does not say the confirmation is recorded:\n%s", page)
	}
}

// TestLivePagesRefreshThemselves: the pages that show the fleet's state reload themselves (no
// script), the pages with forms do not; a cell says in words how many clusters failed, and
// states are coloured.
func TestLivePagesRefreshThemselves(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	const refresh = `<meta http-equiv="refresh" content="30">`
	for path, want := range map[string]bool{"/": true, "/environments/dev": true, "/cluster-types/dev/large": true,
		"/promotions": false, "/audit": false} {
		status, body, _ := f.get(t, c, path, f.readToken)
		if status != http.StatusOK {
			t.Fatalf("GET %s: %d", path, status)
		}
		if got := strings.Contains(body, refresh); got != want {
			t.Errorf("GET %s reloads itself: %v, want %v", path, got, want)
		}
	}
	_, body, _ := f.get(t, c, "/", f.readToken)
	if !strings.Contains(body, `<span class="failed-count">`) || !strings.Contains(body, " deployments") {
		t.Errorf("the overview does not say how many failed, or what its totals count:\n%s", body)
	}
}

// TestCompareProposesTwoEnvironments: Compare opens with the first two environments of the
// chain chosen (not dev → dev), and a value that differs is labelled with the cluster types
// that have it.
func TestCompareProposesTwoEnvironments(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	_, body, _ := f.get(t, c, "/diff", f.readToken)
	from := regexp.MustCompile(`(?s)<select name="from">.*?<option selected>([^<]+)</option>`).FindStringSubmatch(body)
	to := regexp.MustCompile(`(?s)<select name="to">.*?<option selected>([^<]+)</option>`).FindStringSubmatch(body)
	if from == nil || to == nil || from[1] != "dev" || to[1] != "stage" {
		t.Fatalf("Compare proposes %v → %v, want dev → stage:\n%s", from, to, body)
	}
	_, body, _ = f.get(t, c, "/diff?from=dev&to=prod", f.readToken)
	if !strings.Contains(body, `<div class="on">on `) {
		t.Errorf("the differing values are not labelled with their cluster types:\n%s", body)
	}
}

// TestEnvironmentListsItsPromotions: an environment's page lists the promotions and refusals
// into it, newest first.
func TestEnvironmentListsItsPromotions(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	if err := f.hub.Record(ctx, hub.Event{Kind: hub.EventPromotion, Environment: "prod", From: "stage", To: "prod",
		Revision: strings.Repeat("cd", 20), Message: "refused: stage: 3 of 4 clusters compliant"}); err != nil {
		t.Fatal(err)
	}
	_, body, _ := f.get(t, client(t), "/environments/prod", f.readToken)
	table := regexp.MustCompile(`(?s)<table class="promotions-history">.*?</table>`).FindString(body)
	if !strings.Contains(table, `<tr data-kind="promotion">`) || !strings.Contains(table, "refused: stage: 3 of 4 clusters compliant") {
		t.Errorf("prod's page does not list its promotions:\n%s", body)
	}
	if i, j := strings.Index(table, "refused: stage"), strings.LastIndex(table, `data-kind="promotion"`); i < 0 || i > j {
		t.Errorf("the latest promotion is not first:\n%s", table)
	}
}

// syncer records the environments it was asked to sync (by the server's goroutines).
type syncer struct {
	mu   sync.Mutex
	envs []string
}

func (s *syncer) SyncNow(env string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.envs = append(s.envs, env)
	return nil
}

func (s *syncer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.envs)
}

// TestSyncNowIsForAdministrators: under serve, an administrator's environment page offers
// "sync now", which asks serve to sync that environment; a reader gets no button, and a POST
// of theirs is refused.
func TestSyncNowIsForAdministrators(t *testing.T) {
	f := newFleet(t)
	sy := &syncer{}
	f.web.SetSyncer(sy)
	reader := client(t)
	f.signIn(t, reader, f.readToken)
	_, page, _ := f.get(t, reader, "/environments/dev", "")
	if strings.Contains(page, `action="/environments/dev/sync"`) {
		t.Error("a reader is offered sync now")
	}
	if status, _, _ := f.post(t, reader, "/environments/dev/sync", url.Values{"csrf": {csrfOf(t, page)}}); status != http.StatusForbidden {
		t.Errorf("a reader's sync now: %d, want 403", status)
	}
	admin := client(t)
	f.signIn(t, admin, adminToken)
	_, page, _ = f.get(t, admin, "/environments/dev", "")
	if !strings.Contains(page, `action="/environments/dev/sync"`) {
		t.Fatalf("the administrator is not offered sync now:\n%s", page)
	}
	status, _, h := f.post(t, admin, "/environments/dev/sync", url.Values{"csrf": {csrfOf(t, page)}})
	if status != http.StatusSeeOther || h.Get("Location") != "/environments/dev?synced=1" || !slices.Equal(sy.asked(), []string{"dev"}) {
		t.Fatalf("sync now: %d to %q, synced %v", status, h.Get("Location"), sy.asked())
	}
}

// TestClusterSearch: the Clusters page finds clusters by part of their name, environment,
// state and label; a state that is none is refused with the states there are.
func TestClusterSearch(t *testing.T) {
	f := newFleet(t)
	c := client(t)
	_, all, _ := f.get(t, c, "/clusters", f.readToken)
	rows := regexp.MustCompile(`<tr><td><a href="/clusters/([^"]+)">`)
	total := len(rows.FindAllString(all, -1))
	if total == 0 || !strings.Contains(all, `href="/clusters" aria-current="page"`) {
		t.Fatalf("the Clusters page lists nothing:\n%s", all)
	}
	_, dev, _ := f.get(t, c, "/clusters?environment=dev", f.readToken)
	for _, m := range rows.FindAllStringSubmatch(dev, -1) {
		if cl, err := f.hub.Cluster(context.Background(), m[1]); err != nil || cl.Environment != "dev" {
			t.Errorf("environment=dev lists %s (%+v, %v)", m[1], cl.Cluster, err)
		}
	}
	if n := len(rows.FindAllString(dev, -1)); n == 0 || n >= total {
		t.Errorf("environment=dev lists %d of %d clusters", n, total)
	}
	if status, body, _ := f.get(t, c, "/clusters?state=Broken", f.readToken); status != http.StatusBadRequest || !strings.Contains(body, "NonCompliant") {
		t.Errorf("state=Broken: %d\n%s", status, body)
	}
}

// gatesNow is a Promotions whose gates say what statuses says.
type gatesNow struct{ statuses []promote.Status }

func (g gatesNow) Review(context.Context) ([]promote.Status, error) { return g.statuses, nil }
func (g gatesNow) Promote(context.Context, string, string, string, bool, *hub.Actor) (promote.Result, error) {
	return promote.Result{}, errors.New("not here")
}

// TestWaitingShowsTheGatesNow: under serve, a recorded refusal is shown with the gates' reasons
// as they stand now, not with the facts it was recorded with.
func TestWaitingShowsTheGatesNow(t *testing.T) {
	f := newFleet(t)
	ctx := context.Background()
	candidate := strings.Repeat("ab", 20)
	if err := f.hub.Record(ctx, hub.Event{Kind: hub.EventPromotion, Environment: "prod", From: "stage", To: "prod",
		Revision: candidate, Message: "refused: stage: 0 of 25 clusters compliant at revision 1c984d4, 100% required"}); err != nil {
		t.Fatal(err)
	}
	f.web.SetPromotions(gatesNow{statuses: []promote.Status{{Gates: promote.Gates{Environment: "prod", From: "stage"}, Candidate: candidate,
		Unmet: []string{"stage: 22 of 25 clusters compliant at revision 721cbf6, 100% required"}}}})
	waiting := regexp.MustCompile(`(?s)<span class="gate unmet">waiting:.*?</ul>`)
	for _, path := range []string{"/", "/environments/prod"} {
		_, body, _ := f.get(t, client(t), path, f.readToken)
		shown := strings.Join(waiting.FindAllString(body, -1), "\n") // the decisions; the environment's history keeps the record as it was
		if !strings.Contains(shown, "22 of 25 clusters compliant") || strings.Contains(shown, "0 of 25 clusters compliant") ||
			!strings.Contains(shown, "(the gates now)") {
			t.Errorf("%s does not show the gates now: %q\n%s", path, shown, body)
		}
	}
}
