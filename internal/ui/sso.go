package ui

import (
	"context"
	"html/template"
	"net/http"
	"time"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/identity"
)

// SignIn signs people in through the identity provider (*identity.SignIn).
type SignIn interface {
	Begin(ctx context.Context, next, loginHint string) (string, identity.Pending, error)
	Finish(ctx context.Context, p identity.Pending, state, code string, now time.Time) (identity.Session, error)
}

const (
	// pendingCookie holds a started sign-in (sealed) until the provider sends the browser back.
	pendingCookie = "fleetform_oidc"
	// Purposes of sealed values.
	sealPending = "pending"
)

// login starts signing in through the identity provider.
func (u *Handler) login(w http.ResponseWriter, r *http.Request) {
	if u.opts.SignIn == nil {
		u.renderError(w, session{}, http.StatusNotFound, "single sign-on is not set up here: sign in with a hub token")
		return
	}
	authURL, pending, err := u.opts.SignIn.Begin(r.Context(), localPath(r.URL.Query().Get("next")), clipText(r.URL.Query().Get("login_hint"), 256))
	if err != nil {
		u.opts.Logger.ErrorContext(r.Context(), "sign-in", "error", err.Error())
		u.renderError(w, session{}, http.StatusServiceUnavailable, "the identity provider cannot be reached; try again, or ask an administrator (the server's log says why)")
		return
	}
	sealed, err := u.opts.Sealer.Seal(sealPending, pending, u.now().Add(identity.PendingLifetime))
	if err != nil {
		u.fail(w, r, session{}, err)
		return
	}
	// Lax: the provider sends the browser back with a top-level GET from its own site.
	http.SetCookie(w, &http.Cookie{Name: pendingCookie, Value: sealed, Path: "/auth/", HttpOnly: true, Secure: u.secure(r), //nolint:gosec // Secure behind TLS (u.secure)

		SameSite: http.SameSiteLaxMode, MaxAge: int(identity.PendingLifetime / time.Second)})
	http.Redirect(w, r, authURL, http.StatusSeeOther) //nolint:gosec // the provider's authorization endpoint, from its discovery document
}

// callback ends a sign-in: the provider's code for the person's session.
func (u *Handler) callback(w http.ResponseWriter, r *http.Request) {
	if u.opts.SignIn == nil {
		u.renderError(w, session{}, http.StatusNotFound, "single sign-on is not set up here")
		return
	}
	q := r.URL.Query()
	http.SetCookie(w, &http.Cookie{Name: pendingCookie, Value: "", Path: "/auth/", MaxAge: -1, HttpOnly: true, Secure: u.secure(r), //nolint:gosec // as above

		SameSite: http.SameSiteLaxMode})
	var pending identity.Pending
	c, err := r.Cookie(pendingCookie)
	if err == nil {
		err = u.opts.Sealer.Open(sealPending, c.Value, u.now(), &pending)
	}
	if err != nil {
		// Not recorded in the history: anyone can send this request, as often as they like.
		u.opts.Logger.InfoContext(r.Context(), "sign-in callback without a sign-in started here", "error", err.Error())
		u.renderSignIn(w, http.StatusUnauthorized, "", "/", "this sign-in was not started here, or took too long: sign in again")
		return
	}
	if e := q.Get("error"); e != "" {
		u.refuseSignIn(w, r, access.Identity{}, "the identity provider refused the sign-in: "+clipText(e+": "+q.Get("error_description"), 300))
		return
	}
	sess, err := u.opts.SignIn.Finish(r.Context(), pending, q.Get("state"), q.Get("code"), u.now())
	if err != nil {
		u.opts.Logger.WarnContext(r.Context(), "sign-in refused", "error", err.Error())
		u.refuseSignIn(w, r, access.Identity{}, "the sign-in could not be completed: "+clipText(err.Error(), 300))
		return
	}
	id := sess.Identity
	secret, err := u.hub.CreateSession(r.Context(), hub.SessionOf{Person: &id}, personName(id), sess.Expires)
	if err != nil {
		u.fail(w, r, session{}, err)
		return
	}
	u.setSession(w, r, secret, sess.Expires)
	u.opts.Logger.InfoContext(r.Context(), "signed in", "issuer", sess.Identity.Issuer, "subject", sess.Identity.Subject)
	u.continueTo(w, pending.Next)
}

// continueTo sends the browser on from a page of its own (not a redirect): a navigation
// that started at the provider's site would not carry the Strict session cookie.
func (u *Handler) continueTo(w http.ResponseWriter, next string) {
	next = localPath(next)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` +
		template.HTMLEscapeString(next) + `"><title>Signed in · fleetform</title></head><body><p>Signed in. <a href="` +
		template.HTMLEscapeString(next) + `">Continue</a></p></body></html>`))
}

// refuseSignIn shows the sign-in page with why the sign-in failed, recorded in the history.
func (u *Handler) refuseSignIn(w http.ResponseWriter, r *http.Request, id access.Identity, problem string) {
	u.recordSignInFailure(r, id, problem)
	u.renderSignIn(w, http.StatusUnauthorized, "", "/", problem)
}

// recordSignInFailure appends a failed sign-in to the hub's history (who, as far as known,
// and why; never a secret).
func (u *Handler) recordSignInFailure(r *http.Request, id access.Identity, reason string) {
	u.opts.Logger.InfoContext(r.Context(), "sign-in failed", "who", id.String(), "reason", reason)
	actor := &hub.Actor{Issuer: id.Issuer, Subject: id.Subject, Name: id.Name, Email: id.Email, Groups: id.Groups, Token: id.Token}
	if err := u.hub.RecordSignInFailure(context.WithoutCancel(r.Context()), actor, reason); err != nil {
		u.opts.Logger.ErrorContext(r.Context(), "recording a failed sign-in", "error", err.Error())
	}
}

// logout ends the session (a person's or a token's): the hub revokes it, so its cookie
// no longer works anywhere.
func (u *Handler) logout(w http.ResponseWriter, r *http.Request, s session) {
	if secret, fromCookie := requestToken(r); fromCookie {
		if err := u.hub.EndSession(r.Context(), secret); err != nil {
			u.fail(w, r, s, err)
			return
		}
	}
	u.clearSession(w, r)
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

func (u *Handler) now() time.Time {
	if u.opts.Now != nil {
		return u.opts.Now()
	}
	return time.Now()
}

// personName names a person for the navigation bar.
func personName(id access.Identity) string {
	switch {
	case id.Name != "" && id.Email != "":
		return id.Name + " <" + id.Email + ">"
	case id.Name != "":
		return id.Name
	case id.Email != "":
		return id.Email
	}
	return id.Subject
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// me shows who the session is: name, groups, roles.
func (u *Handler) me(w http.ResponseWriter, r *http.Request, s session) {
	id := s.identity()
	data := map[string]any{"Identity": id, "Roles": u.opts.Rights.Roles(id), "Expires": ""}
	if !s.expires.IsZero() {
		data["Expires"] = s.expires.UTC().Format(time.RFC3339)
	}
	u.render(w, r, s, "me", "Who am I", "me", data)
}
