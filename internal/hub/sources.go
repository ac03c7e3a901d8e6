package hub

import (
	"context"
	"net/url"
	"strings"

	"github.com/fleetform/fleetform/internal/repourl"
)

// PutSource records what serve knows of a git source, replacing what was recorded for the
// same URL and branch.
func (h *Hub) PutSource(ctx context.Context, s SourceState) error {
	if err := validateSource(s); err != nil {
		return err
	}
	s.LastError = repourl.RedactText(s.LastError) // a library's message may print a URL with its credentials
	return h.store.Update(ctx, func(tx Tx) error { return tx.PutSource(ctx, s) })
}

// ForgetSource removes what serve recorded of a git source no environment reads any more.
func (h *Hub) ForgetSource(ctx context.Context, url, branch string) error {
	return h.store.Update(ctx, func(tx Tx) error { return tx.DeleteSource(ctx, url, branch) })
}

// Sources returns the git sources serve recorded, by URL and branch.
func (h *Hub) Sources(ctx context.Context) ([]SourceState, error) {
	var out []SourceState
	err := h.store.View(ctx, func(r Reader) error {
		var err error
		out, err = r.Sources(ctx)
		return err
	})
	if out == nil {
		out = []SourceState{}
	}
	return out, err
}

func validateSource(s SourceState) error {
	if err := checkURL("url", s.URL, true); err != nil {
		return err
	}
	switch s.Kind {
	case SourceKindControlPlane, SourceKindWorkload, SourceKindBase:
	default:
		return Errorf(CodeInvalid, "kind %q: want %s, %s or %s", s.Kind, SourceKindControlPlane, SourceKindWorkload, SourceKindBase)
	}
	switch {
	case len(s.Branch) > MaxRefLength || len(s.LastCommit) > MaxRefLength:
		return Errorf(CodeInvalid, "branch and lastCommit may have at most %d bytes", MaxRefLength)
	case len(s.LastError) > MaxErrorLength:
		return Errorf(CodeInvalid, "lastError is longer than %d bytes", MaxErrorLength)
	case s.Failures < 0:
		return Errorf(CodeInvalid, "failures %d: want 0 or more", s.Failures)
	}
	return nil
}

// checkURL checks a repository or pull-request URL: at most MaxURLLength bytes, and no
// credentials, which every read token could read back.
func checkURL(field, s string, required bool) error {
	switch {
	case s == "" && required:
		return Errorf(CodeInvalid, "%s is required", field)
	case len(s) > MaxURLLength:
		return Errorf(CodeInvalid, "%s is longer than %d bytes", field, MaxURLLength)
	case hasCredentials(s):
		return Errorf(CodeInvalid, "%s carries credentials (a user or a password): record it without them", field)
	}
	return nil
}

// hasCredentials reports whether a URL carries a password, or is an http(s) URL with a user
// (a token may be sent as the user). An scp-like address (git@host:path) or a local path is
// not a URL: it carries none.
func hasCredentials(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return false
	}
	_, hasPassword := u.User.Password()
	scheme := strings.ToLower(u.Scheme)
	return hasPassword || scheme == "http" || scheme == "https"
}
