package ui

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/identity"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Chain lists environments in promotion order (the first environments of the chain
// first), each with the environment it is promoted from ("" at the start of the chain), as
// the control plane declares them. serve passes the control plane's; without one the UI
// derives the chain from the promotions recorded in the hub, then orders by name.
type Chain func(ctx context.Context) ([]ChainLink, error)

// ChainLink is an environment of the promotion chain and the one it is promoted from.
type ChainLink struct{ Env, From string }

// Options configure a Handler.
type Options struct {
	// Logger logs failed pages (default: discard).
	Logger *slog.Logger
	// Chain orders environments (nil: from the hub's promotion history).
	Chain Chain
	// SecureCookies marks the session cookie Secure (set it behind TLS; a request that
	// arrived over TLS gets it anyway).
	SecureCookies bool
	// DriftAfter is how long after a revision was posted a cluster at another one counts as
	// behind (default: the hub's staleness limit).
	DriftAfter time.Duration
	// PageSize bounds the rows of a paginated table (default 100).
	PageSize int
	// Changes makes control-plane changes for the authoring pages (nil: none).
	Changes Changes
	// Scheduler reads the control plane for the explain pages (nil: none).
	Scheduler Scheduler
	// Promotions checks the gates and promotes for the promotions page (nil: what the hub
	// recorded only).
	Promotions Promotions
	// Rights decide what a signed-in identity may do (nil: only the admin token may write).
	Rights Rights
	// SignIn signs people in through the identity provider (nil: hub tokens only); Sealer
	// then seals a sign-in under way (sessions are the hub's: hub.CreateSession).
	SignIn SignIn
	Sealer *identity.Sealer
	// DisableTokenSignIn hides and refuses signing in with a hub token (with SignIn set).
	DisableTokenSignIn bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Approvals are the environments' four-eyes rules, which approvals obey (nil: none).
	Approvals *hub.ApprovalRules
	// Syncer syncs an environment at once for an administrator (nil: no "sync now").
	Syncer Syncer
}

// Syncer syncs an environment at once (serve's Service).
type Syncer interface {
	SyncNow(env string) error
}

// SetSyncer enables the environment page's "sync now" (before the handler serves requests).
func (u *Handler) SetSyncer(s Syncer) { u.opts.Syncer = s }

// Rights decide what an identity may do (*access.Rights): each request on its own, and
// which actions a page should offer at all.
type Rights interface {
	Decide(id access.Identity, req access.Request) access.Decision
	Can(id access.Identity, action string) bool
	Roles(id access.Identity) []string
}

// Handler serves the UI.
type Handler struct {
	hub   *hub.Hub
	opts  Options
	mux   *http.ServeMux
	pages map[string]*template.Template
}

// New returns the UI over h.
func New(h *hub.Hub, opts Options) (*Handler, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.DriftAfter <= 0 {
		opts.DriftAfter = h.StaleAfter()
	}
	if opts.PageSize <= 0 {
		opts.PageSize = 100
	}
	if opts.Rights == nil {
		opts.Rights = access.Compile(nil) // no policy: only the admin token writes
	}
	if opts.SignIn != nil && opts.Sealer == nil {
		return nil, errors.New("ui: SignIn needs a Sealer for the sign-ins under way")
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	u := &Handler{hub: h, opts: opts, mux: http.NewServeMux(), pages: pages}
	u.routes()
	return u, nil
}

func (u *Handler) routes() {
	static, _ := fs.Sub(staticFS, "static")
	u.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	u.mux.HandleFunc("GET /signin", u.signInForm)
	u.mux.HandleFunc("POST /signin", u.signIn)
	u.mux.HandleFunc("POST /signout", u.signedIn(u.logout))
	u.mux.HandleFunc("GET /auth/login", u.login)
	u.mux.HandleFunc("GET /auth/callback", u.callback)
	u.mux.HandleFunc("POST /auth/logout", u.signedIn(u.logout))
	u.mux.HandleFunc("GET /me", u.signedIn(u.me))

	u.mux.HandleFunc("GET /{$}", u.signedIn(u.overview))
	u.mux.HandleFunc("GET /environments/{env}", u.signedIn(u.environment))
	u.mux.HandleFunc("POST /environments/{env}/mass-deletion", u.signedIn(u.confirmMassDeletion))
	u.mux.HandleFunc("POST /environments/{env}/sync", u.signedIn(u.syncNow))
	u.mux.HandleFunc("GET /workloads/{name}", u.signedIn(u.workload))
	u.mux.HandleFunc("GET /cluster-types/{env}/{name}", u.signedIn(u.clusterType))
	u.mux.HandleFunc("GET /clusters/{name}", u.signedIn(u.cluster))
	u.mux.HandleFunc("GET /clusters", u.signedIn(u.clusters))
	u.mux.HandleFunc("GET /diff", u.signedIn(u.diff))
	u.mux.HandleFunc("GET /promotions", u.signedIn(u.promotions))
	u.mux.HandleFunc("POST /promotions/approve", u.signedIn(u.approve))
	u.mux.HandleFunc("POST /promotions/promote", u.signedIn(u.promoteNow))
	u.mux.HandleFunc("GET /explain", u.signedIn(u.explain))
	u.mux.HandleFunc("GET /audit", u.signedIn(u.audit))
	u.mux.HandleFunc("GET /author", u.signedIn(u.author))
	u.mux.HandleFunc("POST /author/preview", u.signedIn(u.preview))
	u.mux.HandleFunc("POST /author/commit", u.signedIn(u.commit))
	u.mux.HandleFunc("POST /author/propose", u.signedIn(u.propose))
	u.mux.HandleFunc("POST /author/onboard-cluster", u.signedIn(u.onboardCluster))
}

// SetChain sets how environments are ordered (before the handler serves requests).
func (u *Handler) SetChain(c Chain) { u.opts.Chain = c }

// ServeHTTP serves a page with the UI's security headers.
func (u *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "+
		"frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	u.mux.ServeHTTP(w, r)
}

// Mount serves the API (everything under /api/, and /healthz, /readyz and /metrics) and
// the UI (every other path) on one handler.
func Mount(api, ui http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if strings.HasPrefix(p, "/api/") || p == "/healthz" || p == "/readyz" || p == "/metrics" {
			api.ServeHTTP(w, r)
			return
		}
		ui.ServeHTTP(w, r)
	})
}

// page is what every template receives.
type page struct {
	Title string
	// Nav is the section the page belongs to, for the navigation bar.
	Nav   string
	Admin bool
	// Author is set when the identity may change the control plane somewhere.
	Author bool
	// Who names the signed-in token.
	Who  string
	CSRF string
	Data any
	// Refresh is how often, in seconds, the page reloads itself (0: never).
	Refresh int
}

// refreshSeconds is how often the pages that show the fleet's state reload themselves
// (a <meta http-equiv="refresh">: no script).
const refreshSeconds = 30

// livePages are the pages that reload themselves, unless they hold a form (formPage).
var livePages = map[string]bool{"overview": true, "environment": true, "clustertype": true, "cluster": true, "clusters": true}

// formPage is the data of a live page that may hold a form: it does not reload itself then,
// which would lose what is typed.
type formPage interface{ holdsForm() bool }

// refreshOf is how often the page name with data reloads itself.
func refreshOf(name string, data any) int {
	if f, ok := data.(formPage); !livePages[name] || (ok && f.holdsForm()) {
		return 0
	}
	return refreshSeconds
}

// render writes a page with status 200.
func (u *Handler) render(w http.ResponseWriter, r *http.Request, s session, name, title, nav string, data any) {
	u.renderStatus(w, r, s, http.StatusOK, name, title, nav, data)
}

// renderStatus writes a page with status.
func (u *Handler) renderStatus(w http.ResponseWriter, r *http.Request, s session, status int, name, title, nav string, data any) {
	t, ok := u.pages[name]
	if !ok {
		u.fail(w, r, s, errors.New("no page "+name))
		return
	}
	p := page{Title: title, Nav: nav, Admin: s.admin(), Author: u.mayChange(s), Who: s.who(), CSRF: s.csrf, Data: data,
		Refresh: refreshOf(name, data)}
	var b strings.Builder
	if err := t.ExecuteTemplate(&b, "layout", p); err != nil {
		u.opts.Logger.ErrorContext(r.Context(), "page", "page", name, "error", err.Error())
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// fail shows an error page: the hub's not-found and invalid errors as 404 and 400, others
// as 500 without their text (logged instead).
func (u *Handler) fail(w http.ResponseWriter, r *http.Request, s session, err error) {
	status, msg := http.StatusInternalServerError, "the hub could not answer; the server's log says why"
	switch hub.ErrorCode(err) {
	case hub.CodeNotFound:
		status, msg = http.StatusNotFound, hubMessage(err)
	case hub.CodeInvalid:
		status, msg = http.StatusBadRequest, hubMessage(err)
	case hub.CodeForbidden:
		status, msg = http.StatusForbidden, hubMessage(err)
	default:
		if !errors.Is(err, context.Canceled) {
			u.opts.Logger.ErrorContext(r.Context(), "page failed", "path", r.URL.Path, "error", err.Error())
		}
	}
	u.renderError(w, s, status, msg)
}

// renderError writes the error page with status.
func (u *Handler) renderError(w http.ResponseWriter, s session, status int, msg string) {
	p := page{Title: http.StatusText(status), Admin: s.admin(), Author: u.mayChange(s), Who: s.who(), CSRF: s.csrf,
		Data: map[string]any{"Status": status, "Message": msg}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = u.pages["error"].ExecuteTemplate(w, "layout", p)
}

// canAuthor reports whether the session's identity may change the control plane somewhere:
// whether to offer the Change pages at all (each change is decided on its own).
func (u *Handler) canAuthor(s session) bool {
	return s.principal.Kind != "" && u.opts.Rights.Can(s.identity(), v1alpha1.ActionAuthor)
}

// permit decides a request of the session's identity: "" when allowed, else the reason.
func (u *Handler) permit(s session, req access.Request) string {
	_, denied := u.decide(s, req)
	return denied
}

// decide decides a request of the signed-in identity: the actor to record with the
// decision's reason, or the reason it is denied.
func (u *Handler) decide(s session, req access.Request) (*hub.Actor, string) {
	id := s.identity()
	d := u.opts.Rights.Decide(id, req)
	if !d.Allowed {
		return nil, d.Reason
	}
	return hub.ActorOf(id, d), ""
}

// hubMessage is a hub error's message without its code.
func hubMessage(err error) string {
	var he *hub.Error
	if errors.As(err, &he) {
		return he.Message
	}
	return err.Error()
}
