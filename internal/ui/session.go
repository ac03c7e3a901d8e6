package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
)

// Cookie names.
const (
	// sessionCookie holds the session's secret: a random token the hub keeps (hashed) as a
	// token of kind session (hub.CreateSession), never a hub token or an identity.
	sessionCookie = "fleetform_session"
	// signInCookie holds the sign-in form's CSRF token (double submit: there is no session
	// to derive it from yet).
	signInCookie = "fleetform_signin"
	// csrfField is the form field every POST carries.
	csrfField = "csrf"
)

// sessionLifetime is how long a sign-in lasts.
const sessionLifetime = 12 * time.Hour

// session is who asks for a page.
type session struct {
	principal hub.Principal
	// csrf is the token the session's forms carry ("" when not signed in).
	csrf string
	// expires is when a person's sign-in ends (zero for a hub token's).
	expires time.Time
}

func (s session) admin() bool { return s.principal.Kind == hub.TokenAdmin }

// identity is who the session is, as the access policies judge it.
func (s session) identity() access.Identity { return s.principal.Identity() }

// who names the session's person or token for the navigation bar.
func (s session) who() string {
	switch {
	case s.principal.Kind == "":
		return ""
	case s.principal.Person != nil:
		return personName(*s.principal.Person)
	}
	name := s.identity().Actor()
	switch name {
	case "":
		name = "unnamed token"
	case s.principal.Kind: // the admin token
		return name
	}
	return name + " (" + s.principal.Kind + ")"
}

// csrfToken derives a session's CSRF token from its secret (or a bearer's hub token): an
// HMAC keyed by it, so only whoever holds it (in the page the server wrote for it) knows it,
// and every replica computes the same one.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("fleetform ui csrf"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func sameSecret(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// requestToken is the request's hub token (the bearer header), else its session's secret
// (the session cookie).
func requestToken(r *http.Request) (token string, fromCookie bool) {
	if scheme, t, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(t), false
	}
	if c, err := r.Cookie(sessionCookie); err == nil {
		return c.Value, true
	}
	return "", false
}

// signedIn wraps a page: it needs a person signed in, the admin token or a read-only
// token, and a POST needs the session's CSRF token. Without any, a browser is sent to the
// sign-in page.
func (u *Handler) signedIn(next func(http.ResponseWriter, *http.Request, session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, fromCookie := requestToken(r)
		switch {
		case token == "":
			u.toSignIn(w, r)
		case fromCookie:
			if s, ok := u.openSession(w, r, token); ok {
				u.serveSession(w, r, s, next)
			}
		default:
			p, err := u.hub.Authenticate(r.Context(), token)
			switch {
			case err != nil:
				u.renderError(w, session{}, http.StatusUnauthorized, hubMessage(err))
			case !p.MayRead():
				u.renderError(w, session{}, http.StatusForbidden, "the UI needs a person signed in, the admin token or a read-only token")
			default:
				u.serveSession(w, r, session{principal: p, csrf: csrfToken(token)}, next)
			}
		}
	}
}

// openSession opens the session of the cookie's secret. When it is not one (ended, revoked,
// its token revoked, or switched off), the cookie is cleared and the browser sent to sign
// in: a person whose session expired goes through the identity provider again.
func (u *Handler) openSession(w http.ResponseWriter, r *http.Request, secret string) (session, bool) {
	p, expires, err := u.hub.OpenSession(r.Context(), secret)
	switch {
	case err != nil && hub.ErrorCode(err) != hub.CodeUnauthorized:
		u.fail(w, r, session{}, err)
		return session{}, false
	case err == nil && u.opts.DisableTokenSignIn && p.Kind != hub.PrincipalPerson:
		err = errors.New("token sign-in is switched off")
	}
	if err != nil {
		u.clearSession(w, r)
		if errors.Is(err, hub.ErrSessionExpired) && p.Kind == hub.PrincipalPerson && r.Method == http.MethodGet && u.opts.SignIn != nil {
			http.Redirect(w, r, "/auth/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return session{}, false
		}
		u.toSignIn(w, r)
		return session{}, false
	}
	s := session{principal: p, csrf: csrfToken(secret)}
	if p.Kind == hub.PrincipalPerson {
		s.expires = expires
	}
	return s, true
}

// serveSession serves a page to a signed-in session; a POST needs the session's CSRF token.
func (u *Handler) serveSession(w http.ResponseWriter, r *http.Request, s session, next func(http.ResponseWriter, *http.Request, session)) {
	if r.Method == http.MethodPost && !sameSecret(r.PostFormValue(csrfField), s.csrf) {
		u.renderError(w, s, http.StatusForbidden, "this form is missing its CSRF token or it is stale: reload the page and try again")
		return
	}
	next(w, r, s)
}

// toSignIn redirects a GET to the sign-in page (back here afterwards); anything else is 401.
func (u *Handler) toSignIn(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		u.renderError(w, session{}, http.StatusUnauthorized, "sign in first")
		return
	}
	http.Redirect(w, r, "/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
}

// tokenSignIn reports whether the sign-in page offers (and accepts) hub tokens.
func (u *Handler) tokenSignIn() bool { return !u.opts.DisableTokenSignIn || u.opts.SignIn == nil }

// localPath returns next when it is a path on this server, else "/". A control character
// or a backslash anywhere refuses it: browsers drop tabs and line breaks from a URL and read
// \ as /, so "/\t/host" would send the browser to //host.
func localPath(next string) string {
	if strings.ContainsFunc(next, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\\' }) {
		return "/"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	return next
}

func (u *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	token := base64.RawURLEncoding.EncodeToString(secret)
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: token, Path: "/signin", HttpOnly: true, //nolint:gosec // Secure behind TLS (u.secure); a laptop's http://127.0.0.1 has none

		Secure: u.secure(r), SameSite: http.SameSiteStrictMode, MaxAge: 3600})
	u.renderSignIn(w, http.StatusOK, token, localPath(r.URL.Query().Get("next")), "")
}

func (u *Handler) renderSignIn(w http.ResponseWriter, status int, csrf, next, problem string) {
	p := page{Title: "Sign in", CSRF: csrf, Data: map[string]any{"Next": next, "Problem": problem,
		"SSO": u.opts.SignIn != nil, "Tokens": u.tokenSignIn(), "Login": "/auth/login?next=" + url.QueryEscape(next)}}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = u.pages["signin"].ExecuteTemplate(w, "layout", p)
}

func (u *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(signInCookie)
	if err != nil || !sameSecret(r.PostFormValue(csrfField), c.Value) {
		u.renderError(w, session{}, http.StatusForbidden, "the sign-in form is missing its CSRF token or it is stale: reload the page and try again")
		return
	}
	next := localPath(r.PostFormValue("next"))
	if !u.tokenSignIn() {
		u.renderSignIn(w, http.StatusForbidden, c.Value, next, "signing in with a hub token is switched off here: sign in with single sign-on")
		return
	}
	token := strings.TrimSpace(r.PostFormValue("token"))
	p, err := u.hub.Authenticate(r.Context(), token)
	problem := ""
	switch {
	case token == "":
		problem = "paste a hub token (admin or read-only)"
	case err != nil && hub.ErrorCode(err) == hub.CodeUnauthorized:
		problem = "the hub does not accept this token: " + hubMessage(err)
	case err != nil:
		u.fail(w, r, session{}, err)
		return
	case p.Kind != hub.TokenAdmin && p.Kind != hub.TokenRead:
		problem = "this is not a person's token: sign in with the admin token or a read-only token"
	}
	if problem != "" {
		if token != "" {
			u.recordSignInFailure(r, access.Identity{}, "token sign-in: "+problem)
		}
		u.renderSignIn(w, http.StatusUnauthorized, c.Value, next, problem)
		return
	}
	expires := u.now().Add(sessionLifetime)
	secret, err := u.hub.CreateSession(r.Context(), hub.SessionOf{TokenID: hub.TokenID(hub.HashToken(token))}, session{principal: p}.who(), expires)
	if err != nil {
		u.fail(w, r, session{}, err)
		return
	}
	u.setSession(w, r, secret, expires)
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Value: "", Path: "/signin", MaxAge: -1, HttpOnly: true, //nolint:gosec // as above

		Secure: u.secure(r), SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // next is a path on this server (localPath)
}

// setSession gives the browser its session's secret, until expires.
func (u *Handler) setSession(w http.ResponseWriter, r *http.Request, secret string, expires time.Time) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: secret, Path: "/", HttpOnly: true, Secure: u.secure(r), //nolint:gosec // Secure behind TLS (u.secure)

		SameSite: http.SameSiteStrictMode, MaxAge: int(expires.Sub(u.now()) / time.Second)})
}

func (u *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, //nolint:gosec // Secure behind TLS (u.secure)

		Secure: u.secure(r), SameSite: http.SameSiteStrictMode})
}

func (u *Handler) secure(r *http.Request) bool { return u.opts.SecureCookies || r.TLS != nil }
