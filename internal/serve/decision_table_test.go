package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
	"github.com/fleetform/fleetform/internal/testutil/oidctest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// The decision table of docs/access.md ("What each role of the example can do"), checked
// end to end: the example policy of the same page committed to a real control plane, read
// by the service as fleetform serve reads it, and every row of the table tried by every
// identity of every column through the real HTTP surfaces of one server wired as `fleetform
// serve` wires it (the hub's API, the authoring API and the web UI), people signing in
// through a real OpenID provider and a CI job bringing a trusted issuer's token.

// tableAdminToken is the configured admin token (FLEETFORM_HUB_ADMIN_TOKEN).
const tableAdminToken = "decision-table-admin-token"

// tableFleet is fleetform serve over a folder-layout control plane with environments dev,
// stage and prod (all following the tip), holding the docs' example AccessPolicy,
// payments' workload hello and checkout's workload cart.
type tableFleet struct {
	t      *testing.T
	cp     *gittest.Repo
	hs     *HubServer
	svc    *Service
	idp    *oidctest.Provider // the sign-in provider
	ci     *oidctest.Provider // a CI platform's issuer, trusted for audience "fleetform"
	url    string
	policy string
}

// The people of the example, signing in through the provider by their email as login_hint.
var (
	platformPerson = oidctest.Person{Subject: "u-sam", Email: "sam@contoso.com", Name: "Sam", Groups: []string{"platform-engineers"}}
	paymentsPerson = oidctest.Person{Subject: "u-pat", Email: "pat@contoso.com", Name: "Pat", Groups: []string{"payments-devs"}}
	checkoutPerson = oidctest.Person{Subject: "u-cleo", Email: "cleo@contoso.com", Name: "Cleo", Groups: []string{"checkout-devs"}}
	prodApprover   = oidctest.Person{Subject: "u-ada", Email: "ada@contoso.com", Name: "Ada", Groups: []string{"finance"}}
	groupless      = oidctest.Person{Subject: "u-rita", Email: "rita@contoso.com", Name: "Rita"}
)

// examplePolicy is the AccessPolicy of docs/access.md's example, as the page shows it.
func examplePolicy(t *testing.T, doc string) string {
	t.Helper()
	for _, block := range strings.Split(doc, "```yaml\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if strings.Contains(block, "kind: AccessPolicy") && strings.Contains(block, "name: prod-approvers") {
			return block
		}
	}
	t.Fatal("docs/access.md shows no example AccessPolicy with the role prod-approvers")
	return ""
}

// docsTable is the table "What each role of the example can do": its columns (the roles)
// and, by row, whether each column may.
type docsTable struct {
	columns []string
	rows    []docsRow
}

type docsRow struct {
	what string
	may  map[string]bool // by column
}

func readDocsTable(t *testing.T, doc string) docsTable {
	t.Helper()
	_, section, ok := strings.Cut(doc, "## What each role of the example can do\n")
	if !ok {
		t.Fatal("docs/access.md has no section \"What each role of the example can do\"")
	}
	cells := func(line string) []string {
		parts := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts
	}
	var tbl docsTable
	for i, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			if len(tbl.rows) > 0 {
				break
			}
			continue
		}
		c := cells(line)
		switch {
		case tbl.columns == nil:
			tbl.columns = c[1:]
		case strings.HasPrefix(c[0], "---"):
		default:
			if len(c) != len(tbl.columns)+1 {
				t.Fatalf("docs table line %d has %d cells, want %d: %q", i, len(c), len(tbl.columns)+1, line)
			}
			row := docsRow{what: c[0], may: map[string]bool{}}
			for j, v := range c[1:] {
				if v != "yes" && v != "no" {
					t.Fatalf("docs table row %q, column %q: %q, want yes or no", row.what, tbl.columns[j], v)
				}
				row.may[tbl.columns[j]] = v == "yes"
			}
			tbl.rows = append(tbl.rows, row)
		}
	}
	if len(tbl.rows) == 0 {
		t.Fatal("the docs table has no rows")
	}
	return tbl
}

func newTableFleet(t *testing.T, policy string) *tableFleet {
	t.Helper()
	f := &tableFleet{t: t, cp: gittest.NewBare(t), policy: policy}
	var err error
	f.idp, err = oidctest.StartWith(t.Context(), oidctest.Options{People: []oidctest.Person{groupless, platformPerson, paymentsPerson, checkoutPerson, prodApprover}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.idp.Close() })
	if f.ci, err = oidctest.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.ci.Close() })

	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	logger := slog.New(slog.DiscardHandler)
	f.hs, err = StartHub(t.Context(), HubConfig{DB: "sqlite:" + filepath.Join(t.TempDir(), "hub.db"), AdminToken: tableAdminToken,
		Out: io.Discard, Logger: logger, SSO: SSO{Issuer: f.idp.Issuer(), ClientID: f.idp.ClientID(), ClientSecret: f.idp.ClientSecret(),
			ExternalURL: srv.URL, Trusted: []string{f.ci.Issuer() + "=fleetform"}, SessionSecret: "decision table"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.hs.Store.Close(); err != nil {
			t.Errorf("closing the hub's store: %v", err)
		}
	})
	storetest.RunHub(t, f.hs.Hub)

	gitops := gittest.NewBare(t).Checked(t)
	files := map[string]string{
		"access.yaml":   policy,
		"common.yaml":   configMap("common", "RELEASE", "1"),
		"payments.yaml": teamWorkload("hello", "payments"),
		"checkout.yaml": teamWorkload("cart", "checkout"),
	}
	from := ""
	for _, env := range []string{"dev", "stage", "prod"} {
		promotion := ""
		if from != "" {
			promotion = "\n  promotion: {from: " + from + "}"
		}
		from = env
		files["environments/"+env+"/env.yaml"] = fmt.Sprintf(`apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: %s}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}%s
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: large}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: GitOpsRepo
metadata: {name: %s}
spec: {repo: %s, branch: %s, path: .}
`, env, promotion, env, gitops.Dir, env)
		files["environments/"+env+"/config.yaml"] = configMap(env+"-config", "LOG_LEVEL", "info")
	}
	f.cp.Commit(t, "main", files)

	// Wired as `fleetform serve` wires it (internal/cli/serve.go).
	c := &clock{now: time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)}
	fl := fleet.New(fleet.Config{ControlPlane: f.cp.Dir, Read: controlplane.Options{}, CacheDir: t.TempDir(),
		Hub: fleet.LocalHub(f.hs.Hub), Rights: f.hs.Rights})
	f.svc = New(Options{Fleet: fl, Interval: interval, Hub: f.hs.Hub, Rights: f.hs.Rights, Approvals: f.hs.Approvals, Now: c.Now, Logger: logger})
	f.hs.UI.SetChain(f.svc.Chain)
	f.hs.UI.SetScheduler(f.svc)
	f.hs.UI.SetPromotions(f.svc.Promotions())
	changes := NewControlPlaneChanges(ChangesOptions{Fleet: fl, Hub: f.hs.Hub, Logger: logger})
	f.hs.UI.SetChanges(changes)
	mux.Handle("/", Handler(f.hs.Handler(), f.hs.Hub, f.svc, NewWebhooks("", f.svc, logger), changes.Handler()))

	// One round reads the policies at the tip and in every environment, and each
	// environment's workloads' workspaces.
	c.Advance(interval)
	f.svc.round(t.Context(), map[string]bool{})
	if !f.hs.Rights.Enforced() {
		t.Fatal("the service read no access policy at the tip")
	}
	for _, env := range []string{"dev", "stage", "prod"} {
		if got := f.hs.Rights.WorkspaceOf(env, "hello"); got != "payments" {
			t.Fatalf("hello's workspace in %s: %q, want payments", env, got)
		}
		if got := f.hs.Rights.WorkspaceOf(env, "cart"); got != "checkout" {
			t.Fatalf("cart's workspace in %s: %q, want checkout", env, got)
		}
	}
	return f
}

// teamWorkload is a workload of workspace with a deployment target in each environment.
func teamWorkload(name, workspace string) string {
	var targets strings.Builder
	for _, env := range []string{"dev", "stage", "prod"} {
		fmt.Fprintf(&targets, "    - {name: %s-%s, environment: %s, manifests: {repo: https://example.com/%s, branch: main, path: ./%s}}\n", name, env, env, name, env)
	}
	return fmt.Sprintf("apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: %s, labels: {workspace: %s}}\nspec:\n  deploymentTargets:\n%s",
		name, workspace, targets.String())
}

// who is an identity asking: its bearer token on the API and, when it has one, its signed-in
// session in the web UI.
type who struct {
	label string // for messages
	// shown is how decisions name it (access.Identity.String).
	shown  string
	bearer string
	web    *http.Client // nil: no session in the UI (a CI job)
	csrf   string
	n      int // a number of its own, for the names of what it adds
}

// person signs p in: through the provider on the API (its ID token from the code flow, as a
// bearer) and in the web UI (the code flow, as a browser).
func (f *tableFleet) person(p oidctest.Person, n int) *who {
	t := f.t
	t.Helper()
	idToken, err := oidctest.IDToken(t.Context(), f.idp.Issuer(), f.idp.ClientID(), f.idp.ClientSecret(), p.Email)
	if err != nil {
		t.Fatal(err)
	}
	w := &who{label: p.Email, shown: p.Email, bearer: idToken, web: browserClient(t), n: n}
	status, _, h := f.do(w.web, http.MethodGet, "/auth/login?next=%2Fpromotions&login_hint="+url.QueryEscape(p.Email), "", "", nil)
	if status != http.StatusSeeOther || !strings.HasPrefix(h.Get("Location"), f.idp.Issuer()) {
		t.Fatalf("%s: /auth/login: %d to %q, want the provider", p.Email, status, h.Get("Location"))
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.Get("Location"), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := w.web.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	callback, ok := strings.CutPrefix(resp.Header.Get("Location"), f.url)
	if !ok || !strings.HasPrefix(callback, "/auth/callback?") {
		t.Fatalf("%s: the provider sent the browser to %q", p.Email, resp.Header.Get("Location"))
	}
	if status, body, _ := f.do(w.web, http.MethodGet, callback, "", "", nil); status != http.StatusOK {
		t.Fatalf("%s: callback: %d\n%s", p.Email, status, body)
	}
	f.settle(w)
	return w
}

// token is a hub token's identity, signed in to the web UI with the token form.
func (f *tableFleet) token(name, secret string, n int) *who {
	t := f.t
	t.Helper()
	w := &who{label: "token " + name, shown: "token " + name, bearer: secret, web: browserClient(t), n: n}
	_, body, _ := f.do(w.web, http.MethodGet, "/signin?next=%2Fpromotions", "", "", nil)
	status, _, h := f.do(w.web, http.MethodPost, "/signin", "", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"csrf": {csrfIn(t, body)}, "token": {secret}, "next": {"/promotions"}}.Encode()))
	if status != http.StatusSeeOther || h.Get("Location") != "/promotions" {
		t.Fatalf("%s: token sign-in: %d to %q", name, status, h.Get("Location"))
	}
	f.settle(w)
	return w
}

// settle reads the session's CSRF token from the promotions page.
func (f *tableFleet) settle(w *who) {
	f.t.Helper()
	status, body, _ := f.do(w.web, http.MethodGet, "/promotions", "", "", nil)
	if status != http.StatusOK {
		f.t.Fatalf("%s: /promotions after signing in: %d", w.label, status)
	}
	w.csrf = csrfIn(f.t, body)
}

var tableCSRF = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfIn(t *testing.T, page string) string {
	t.Helper()
	m := tableCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF token in the page:\n%s", page)
	}
	return m[1]
}

func browserClient(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// do sends a request to the server and returns its status, body and headers.
func (f *tableFleet) do(c *http.Client, method, path, bearer, contentType string, body io.Reader) (int, string, http.Header) {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), method, f.url+path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(data), resp.Header
}

// api calls the API as w with a JSON body (nil: none).
func (f *tableFleet) api(w *who, method, path string, body any) (int, string) {
	f.t.Helper()
	var r io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			f.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	status, out, _ := f.do(http.DefaultClient, method, path, w.bearer, "application/json", r)
	return status, out
}

// form posts a form of the web UI in w's session, with its CSRF token.
func (f *tableFleet) form(w *who, path string, form url.Values) (int, string, http.Header) {
	f.t.Helper()
	form.Set("csrf", w.csrf)
	return f.do(w.web, http.MethodPost, path, "", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// state is what a write changes: the control plane's repository, and what the hub records as
// done (the history but the refused attempts it records, the approvals, the tokens).
type state struct {
	repo map[string]string
	done int
	// refused are the refused attempts recorded, as "who: why".
	refused   []string
	approvals int
	tokens    int
}

func (f *tableFleet) state() state {
	t := f.t
	t.Helper()
	events, err := f.hs.Hub.History(t.Context(), hub.HistoryFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	s := state{repo: gittest.ReadDir(t, f.cp.Dir)}
	for _, e := range events {
		switch {
		case !strings.HasPrefix(e.Message, "refused: "):
			s.done++
		case e.Actor != nil:
			s.refused = append(s.refused, e.Actor.Reason)
		}
	}
	for _, env := range []string{"dev", "stage", "prod"} {
		a, err := f.hs.Hub.Approvals(t.Context(), env)
		if err != nil {
			t.Fatal(err)
		}
		s.approvals += len(a)
	}
	tokens, err := f.hs.Hub.Tokens(t.Context(), hub.TokenFilter{})
	if err != nil {
		t.Fatal(err)
	}
	s.tokens = len(tokens)
	return s
}

func (s state) equal(o state) bool {
	return s.done == o.done && s.approvals == o.approvals && s.tokens == o.tokens && equalBytes(s.repo, o.repo)
}

// attempt is one try of an action through one surface: the status and the body answered.
type attempt struct {
	surface string
	status  int
	body    string
	// gated is set when the attempt was allowed but a promotion's gates refused it.
	gated bool
	// audited is set when a refusal of the surface is recorded in the history (the
	// authoring API's).
	audited bool
}

// judge checks an attempt against the table: allowed, the surface's status of success and
// something written or recorded;
// refused, 403 with a reason naming the identity and the action it may not do, and nothing
// written or recorded as done.
//
// A refusal's reason must say "<identity> may not <action>" for one of actions.
func (f *tableFleet) judge(row string, w *who, want bool, okStatus int, try func() attempt, actions ...string) {
	t := f.t
	t.Helper()
	before := f.state()
	a := try()
	if want {
		if a.status != okStatus {
			t.Errorf("%q, %s through %s: %d, want %d (allowed)\n%s", row, w.label, a.surface, a.status, okStatus, excerpt(a.body))
		}
		if before.equal(f.state()) && !a.gated {
			t.Errorf("%q, %s through %s: allowed, but nothing was written or recorded", row, w.label, a.surface)
		}
		return
	}
	var reasons []string
	said := false
	for _, action := range actions {
		reason := w.shown + " may not " + action
		reasons = append(reasons, reason)
		said = said || strings.Contains(html.UnescapeString(a.body), reason)
	}
	if a.status != http.StatusForbidden || !said {
		t.Errorf("%q, %s through %s: %d, want 403 saying one of %q\n%s", row, w.label, a.surface, a.status, reasons, excerpt(a.body))
	}
	after := f.state()
	if !before.equal(after) {
		t.Errorf("%q, %s through %s: refused, but something was written or recorded as done", row, w.label, a.surface)
	}
	if a.audited && (len(after.refused) != len(before.refused)+1 || !strings.HasPrefix(after.refused[0], w.shown+" may not ")) {
		t.Errorf("%q, %s through %s: the refusal is not in the history with its reason: %q", row, w.label, a.surface, after.refused)
	}
}

// excerpt is what a failure shows of an answer: a page's main part, unescaped, or the
// API's JSON.
func excerpt(body string) string {
	if _, main, ok := strings.Cut(body, "<main>"); ok {
		main, _, _ = strings.Cut(main, "</main>")
		body = html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(main, ""))
	}
	body = strings.Join(strings.Fields(body), " ")
	return body[:min(len(body), 600)]
}

// whoami checks that GET /api/v1/whoami answers the question as the table does.
func (f *tableFleet) whoami(row string, w *who, want bool, query string) {
	f.t.Helper()
	status, body := f.api(w, http.MethodGet, "/api/v1/whoami?"+query, nil)
	var me api.WhoAmI
	if status != http.StatusOK || json.Unmarshal([]byte(body), &me) != nil || me.Decision == nil {
		f.t.Errorf("%q, %s: whoami?%s: %d %s", row, w.label, query, status, body)
		return
	}
	if me.Decision.Allowed != want || !strings.HasPrefix(me.Decision.Reason, w.shown+" ") {
		f.t.Errorf("%q, %s: whoami?%s says allowed=%v (%s), want %v", row, w.label, query, me.Decision.Allowed, me.Decision.Reason, want)
	}
}

// The surfaces: a helper for each.

// author posts a change to the authoring API.
func (f *tableFleet) author(w *who, ops ...authoring.Operation) func() attempt {
	return func() attempt {
		status, body := f.api(w, http.MethodPost, "/api/v1/controlplane/changes", ChangesRequest{Operations: ops})
		return attempt{surface: "POST /api/v1/controlplane/changes", status: status, body: body, audited: true}
	}
}

// authorInUI previews then commits a change with the web UI's Change forms; a refused
// preview is the answer (its commit is then tried too, and must be refused as well).
func (f *tableFleet) authorInUI(w *who, form url.Values) func() attempt {
	return func() attempt {
		status, body, _ := f.form(w, "/author/preview", cloneValues(form))
		if status != http.StatusOK {
			cs, cb, _ := f.form(w, "/author/commit", cloneValues(form))
			if cs != status {
				return attempt{surface: "the UI's /author/commit after a refused preview", status: cs, body: cb}
			}
			return attempt{surface: "the UI's /author/preview", status: status, body: body}
		}
		status, body, _ = f.form(w, "/author/commit", cloneValues(form))
		return attempt{surface: "the UI's /author/preview then /author/commit", status: status, body: body}
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

// event records a promotion or an override through the hub's API.
func (f *tableFleet) event(w *who, e hub.Event) func() attempt {
	return func() attempt {
		status, body := f.api(w, http.MethodPost, "/api/v1/events", e)
		return attempt{surface: "POST /api/v1/events (" + e.Kind + ")", status: status, body: body}
	}
}

// approval approves a commit's promotion into env through the hub's API.
func (f *tableFleet) approval(w *who, env string) func() attempt {
	return func() attempt {
		status, body := f.api(w, http.MethodPost, "/api/v1/approvals", api.Approval{Environment: env, Commit: "c0ffee", By: "on call"})
		return attempt{surface: "POST /api/v1/approvals", status: status, body: body}
	}
}

// approvalInUI approves with the promotions page's approve form.
func (f *tableFleet) approvalInUI(w *who, env string) func() attempt {
	return func() attempt {
		status, body, _ := f.form(w, "/promotions/approve", url.Values{"environment": {env}, "commit": {"c0ffee"}})
		return attempt{surface: "the UI's /promotions/approve", status: status, body: body}
	}
}

// promoteInUI promotes (overriding the gates when override) with the promotions page's form.
func (f *tableFleet) promoteInUI(w *who, env string, override bool) func() attempt {
	return func() attempt {
		form := url.Values{"environment": {env}, "reason": {"the decision table"}}
		if override {
			form.Set("override", "on")
		}
		status, body, h := f.form(w, "/promotions/promote", form)
		a := attempt{surface: "the UI's /promotions/promote (override " + fmt.Sprint(override) + ")", status: status, body: body}
		if done, err := url.Parse(h.Get("Location")); err == nil && strings.HasPrefix(done.Query().Get("done"), "not promoted into "+env+": ") {
			// Allowed, and taken to the gates, which did not let it through: that is the
			// gates' answer, not the access policies'.
			a.gated, a.body = true, done.Query().Get("done")
		}
		return a
	}
}

// offersPromote reports whether the promotions page offers w the promote form of env.
func (f *tableFleet) offersPromote(w *who, env string) bool {
	f.t.Helper()
	status, page, _ := f.do(w.web, http.MethodGet, "/promotions", "", "", nil)
	if status != http.StatusOK {
		f.t.Fatalf("%s: /promotions: %d", w.label, status)
	}
	return regexp.MustCompile(`action="/promotions/promote" class="promote">\s*<input type="hidden" name="csrf" value="[^"]*">\s*` +
		`<input type="hidden" name="environment" value="` + regexp.QuoteMeta(env) + `">`).MatchString(page)
}

// newToken creates a read-only hub token through the hub's API.
func (f *tableFleet) newToken(w *who) func() attempt {
	return func() attempt {
		status, body := f.api(w, http.MethodPost, "/api/v1/tokens", api.TokenRequest{Name: fmt.Sprintf("dashboard-%d", w.n), Kind: hub.TokenRead})
		return attempt{surface: "POST /api/v1/tokens", status: status, body: body}
	}
}

// read reads a page of the API and of the UI.
func (f *tableFleet) read(w *who) []attempt {
	status, body := f.api(w, http.MethodGet, "/api/v1/environments", nil)
	out := []attempt{{surface: "GET /api/v1/environments", status: status, body: body}}
	if w.web != nil {
		for _, page := range []string{"/", "/promotions", "/audit"} {
			status, body, _ := f.do(w.web, http.MethodGet, page, "", "", nil)
			out = append(out, attempt{surface: "the UI's " + page, status: status, body: body})
		}
	}
	return out
}

func workloadOp(t *testing.T, name, workspace string) authoring.Operation {
	t.Helper()
	op, err := authoring.AddWorkload(name, workspace, nil, name+"-dev", "dev", "https://example.com/"+name, "main", ".", nil)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func workloadForm(name, workspace string) url.Values {
	return url.Values{"form": {"workload"}, "name": {name}, "workspace": {workspace}, "target": {name + "-dev"}, "env": {"dev"},
		"repo": {"https://example.com/" + name}, "branch": {"main"}, "path": {"."}}
}

// TestAccessDecisionTable: every row of docs/access.md's table "What each role of the
// example can do", for every identity of every column (people signed in through the
// provider, a read-only token, a CI job's token; and the admin token, which may everything),
// through the API and the web UI: allowed where the table says yes, else 403 with a reason
// naming the identity and what it may not do, with nothing written or recorded as done.
// Beyond the table: a change that claims payments' workspace but takes checkout's workload
// is refused to everyone but the admin token.
func TestAccessDecisionTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(gittest.ModuleRoot(t), "docs", "access.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	table := readDocsTable(t, doc)
	f := newTableFleet(t, examplePolicy(t, doc))

	ciJob := func(repository string, n int) *who {
		sub := "repo:" + repository + ":ref:refs/heads/main"
		tok, err := f.ci.Token(sub, "fleetform", time.Hour, map[string]any{"repository": repository, "ref": "refs/heads/main"})
		if err != nil {
			t.Fatal(err)
		}
		return &who{label: "the CI job of " + repository, shown: sub, bearer: tok, n: n}
	}
	readToken := func(name string) string {
		_, s, err := f.hs.Hub.CreateToken(t.Context(), hub.TokenRead, name, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The identities of each column of the table.
	n := 0
	next := func() int { n++; return n }
	byColumn := map[string][]*who{
		"platform": {f.person(platformPerson, next())},
		"payments (and its CI job)": {f.person(paymentsPerson, next()), f.token("payments-ci", readToken("payments-ci"), next()),
			ciJob("contoso/payments", next())},
		"checkout":       {f.person(checkoutPerson, next())},
		"prod-approvers": {f.person(prodApprover, next())},
		"a read-only token with no role": {f.token("viewer", readToken("viewer"), next()), f.person(groupless, next()),
			ciJob("contoso/checkout", next())},
	}
	admin := f.token("admin", tableAdminToken, next()) // the configured admin token is named "admin"
	admin.label = "the admin token"
	for _, col := range table.columns {
		if len(byColumn[col]) == 0 {
			t.Fatalf("the docs table has a column %q this test has no identity for", col)
		}
	}
	if len(byColumn) != len(table.columns) {
		t.Fatalf("the docs table's columns are %q; this test has identities for %d columns", table.columns, len(byColumn))
	}

	rows := tableRows(t, f)
	for _, row := range table.rows {
		check, ok := rows[row.what]
		if !ok {
			t.Errorf("the docs table's row %q is not checked by this test: add it", row.what)
			continue
		}
		delete(rows, row.what)
		for _, col := range table.columns {
			for _, w := range byColumn[col] {
				check(row.what, w, row.may[col])
			}
		}
		check(row.what, admin, true)
	}
	for what := range rows {
		t.Errorf("this test checks a row %q the docs table no longer has", what)
	}

	// Beyond the table: a change that says it is payments' but takes checkout's workload
	// touches checkout (and payments) and is refused to all but the admin token, which
	// goes last (its change moves cart to payments).
	const takeover = "claims payments, takes checkout's workload"
	for _, col := range table.columns {
		for _, w := range byColumn[col] {
			f.judge(takeover, w, false, http.StatusOK, f.author(w,
				authoring.Operation{Op: authoring.OpSet, Kind: "Workload", Name: "cart", Labels: map[string]string{"workspace": "payments"}}), "author in workspace")
		}
	}
	f.judge(takeover, admin, true, http.StatusOK, f.author(admin,
		authoring.Operation{Op: authoring.OpSet, Kind: "Workload", Name: "cart", Labels: map[string]string{"workspace": "payments"}}), "")
}

// tableRows are the checks of each row of the docs table, by its text: each tries the row's
// action through every surface that offers it, and asks whoami.
func tableRows(t *testing.T, f *tableFleet) map[string]func(row string, w *who, want bool) {
	t.Helper()
	promotion := func(env, workload string) hub.Event {
		from := map[string]string{"dev": "", "stage": "dev", "prod": "stage"}[env]
		return hub.Event{Kind: hub.EventPromotion, Environment: env, Workload: workload, Revision: "c0ffee", From: from, To: env, Message: "promoted"}
	}
	teamRow := func(workspace, existing string) func(row string, w *who, want bool) {
		return func(row string, w *who, want bool) {
			action := "author in workspace " + workspace
			f.whoami(row, w, want, "action=author&workspace="+workspace)
			f.judge(row, w, want, http.StatusOK, f.author(w, workloadOp(t, fmt.Sprintf("%s-%d", workspace, w.n), workspace)), action)
			f.judge(row, w, want, http.StatusOK, f.author(w, authoring.Operation{Op: authoring.OpAdd, Kind: authoring.KindDeploymentTarget,
				Name: fmt.Sprintf("%s-extra-%d", existing, w.n), Workload: existing,
				Spec: map[string]any{"environment": "stage", "manifests": map[string]any{"repo": "https://example.com/" + existing, "branch": "main", "path": "./extra"}}}), action)
			if w.web != nil {
				f.judge(row, w, want, http.StatusOK, f.authorInUI(w, workloadForm(fmt.Sprintf("ui-%s-%d", workspace, w.n), workspace)), action, authorNothing)
			}
		}
	}
	policy := func(n int) authoring.Operation {
		op, err := authoring.AddPolicy(fmt.Sprintf("policy-%d", n), "dev", "", "region=west", "size=large")
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	return map[string]func(row string, w *who, want bool){
		"read every page": func(row string, w *who, want bool) {
			for _, a := range f.read(w) {
				if want != (a.status == http.StatusOK) {
					t.Errorf("%q, %s through %s: %d, want allowed=%v", row, w.label, a.surface, a.status, want)
				}
			}
		},
		"change a cluster type, a policy, platform config": func(row string, w *who, want bool) {
			const action = "author the platform's objects"
			f.whoami(row, w, want, "action=author&platform=true")
			f.judge(row, w, want, http.StatusOK, f.author(w, authoring.AddClusterType(fmt.Sprintf("edge-%d", w.n), "dev", map[string]string{"region": "west"}, "", "", "")), action)
			f.judge(row, w, want, http.StatusOK, f.author(w, policy(w.n)), action)
			f.judge(row, w, want, http.StatusOK, f.author(w, authoring.Operation{Op: authoring.OpSet, Kind: "ConfigMap", Env: "dev",
				Scope: &authoring.ConfigScope{EnvironmentWide: true}, Data: map[string]any{fmt.Sprintf("KEY_%d", w.n): "on"}}), action)
			if w.web != nil {
				f.judge(row, w, want, http.StatusOK, f.authorInUI(w, url.Values{"form": {"cluster-type"}, "name": {fmt.Sprintf("ui-edge-%d", w.n)},
					"env": {"dev"}, "labels": {"region=east"}}), action, authorNothing)
			}
		},
		"change payments' workloads and targets": teamRow("payments", "hello"),
		"change checkout's workloads":            teamRow("checkout", "cart"),
		"promote an environment": func(row string, w *who, want bool) {
			f.whoami(row, w, want, "action=promote&environment=stage")
			f.judge(row, w, want, http.StatusCreated, f.event(w, promotion("stage", "")), "promote in environment stage")
			if w.web != nil {
				if got := f.offersPromote(w, "stage"); got != want {
					t.Errorf("%q, %s: the promotions page offers the promote form of stage: %v, want %v", row, w.label, got, want)
				}
				f.judge(row, w, want, http.StatusSeeOther, f.promoteInUI(w, "stage", false), "promote in environment stage")
			}
		},
		"promote payments' app into dev or stage": func(row string, w *who, want bool) {
			for _, env := range []string{"dev", "stage"} {
				f.whoami(row, w, want, "action=promote&environment="+env+"&workload=hello")
				f.judge(row, w, want, http.StatusCreated, f.event(w, promotion(env, "hello")), "promote in workspace payments in environment "+env)
			}
		},
		"promote payments' app into prod": func(row string, w *who, want bool) {
			f.whoami(row, w, want, "action=promote&environment=prod&workload=hello")
			f.judge(row, w, want, http.StatusCreated, f.event(w, promotion("prod", "hello")), "promote in workspace payments in environment prod")
		},
		"approve into dev":  approveRow(f, "dev"),
		"approve into prod": approveRow(f, "prod"),
		"override a gate": func(row string, w *who, want bool) {
			f.whoami(row, w, want, "action=override&environment=prod")
			f.judge(row, w, want, http.StatusCreated, f.event(w, hub.Event{Kind: hub.EventOverride, Environment: "prod", Message: "hotfix"}), "override in environment prod")
			if w.web != nil {
				// The form needs promote and override: the first one missing is the reason.
				f.judge(row, w, want, http.StatusSeeOther, f.promoteInUI(w, "prod", true), "promote in environment prod", "override in environment prod")
			}
		},
		"administer tokens": func(row string, w *who, want bool) {
			f.whoami(row, w, want, "action=tokens")
			f.judge(row, w, want, http.StatusCreated, f.newToken(w), "tokens")
		},
	}
}

// authorNothing is the Change pages' refusal of whoever holds no author rule at all: they
// are refused before the change is looked at.
const authorNothing = "author: no role allows it"

func approveRow(f *tableFleet, env string) func(row string, w *who, want bool) {
	return func(row string, w *who, want bool) {
		f.whoami(row, w, want, "action=approve&environment="+env)
		f.judge(row, w, want, http.StatusCreated, f.approval(w, env), "approve in environment "+env)
		if w.web != nil {
			f.judge(row, w, want, http.StatusSeeOther, f.approvalInUI(w, env), "approve in environment "+env)
		}
	}
}
