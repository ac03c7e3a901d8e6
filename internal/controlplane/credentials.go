package controlplane

import (
	"context"
	"fmt"
	"net/http"

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
