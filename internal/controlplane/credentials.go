package controlplane

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"

	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/repourl"
)

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
type Credentials interface {
	For(ctx context.Context, url string) (*gitauth.Credential, error)
}

var _ Credentials = (*gitauth.Store)(nil)

// httpAuth returns the go-git authentication for fetching url: nil when creds choose none.
func httpAuth(ctx context.Context, creds Credentials, url string) (transport.AuthMethod, error) {
	if creds == nil {
		return nil, nil
	}
	c, err := creds.For(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", repourl.Redact(url), err)
	}
	if c == nil {
		return nil, nil
	}
	return &scopedAuth{c: c}, nil
}

// remoteAuth returns what go-git is given to fetch raw: the URL, without the user
// information of an http(s) URL, and its authentication: the credential creds choose, or
// else the user and password written in the URL, sent as go-git would send them. go-git and
// net/http print a request's URL in their errors with its user name, where a token is often
// written, so the URL they are given carries none.
func remoteAuth(ctx context.Context, creds Credentials, raw string) (string, transport.AuthMethod, error) {
	auth, err := httpAuth(ctx, creds, raw)
	if err != nil {
		return "", nil, err
	}
	u := httpUserinfo(raw)
	if u == nil {
		return raw, auth, nil
	}
	if auth == nil {
		password, _ := u.User.Password()
		auth = &githttp.BasicAuth{Username: u.User.Username(), Password: password}
	}
	u.User = nil
	return u.String(), auth, nil
}

// httpUserinfo returns raw parsed when it is an http(s) URL with user information, else nil.
func httpUserinfo(raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User == nil {
		return nil
	}
	return u
}

// scopedAuth is HTTP Basic authentication that go-git applies to each request, and that
// adds the credential only to requests its scope covers (the origin it was chosen for):
// a redirect to another host, port or scheme gets no credential.
type scopedAuth struct{ c *gitauth.Credential }

var _ githttp.AuthMethod = (*scopedAuth)(nil)

// SetAuth adds the credential to r when r goes where the credential may go.
func (a *scopedAuth) SetAuth(r *http.Request) {
	if a.c.Covers(r.URL) {
		r.SetBasicAuth(a.c.Username, a.c.Password)
	}
}

// Name names the method, as go-git's BasicAuth does.
func (a *scopedAuth) Name() string { return "http-basic-auth" }

// String names the credential, without the secret.
func (a *scopedAuth) String() string { return a.Name() + " - " + a.c.String() }
