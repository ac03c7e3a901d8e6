package agent

import (
	"context"
	"fmt"
	"net/http"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// Poster delivers one report to the hub; it returns once the hub acknowledged it (202:
// durable) or failed.
type Poster interface {
	Report(ctx context.Context, r hub.Report) error
}

// TokenSource returns the cluster's token; it is called before every request, so that a
// token file rotated in place (a Kubernetes Secret volume) is picked up.
type TokenSource func() (string, error)

// HTTPPoster posts reports to the hub (POST /api/v1/reports) with the cluster's token,
// through the hub's client: an answer other than 202 is a *client.Error with the status and
// the hub's reason.
type HTTPPoster struct {
	client *client.Client
	token  TokenSource
}

// NewHTTPPoster returns a Poster for the hub at baseURL (http or https) that authenticates
// with the token from token. A nil httpClient means the hub client's default.
func NewHTTPPoster(baseURL string, token TokenSource, httpClient *http.Client) (*HTTPPoster, error) {
	c, err := client.New(baseURL, "", httpClient)
	if err != nil {
		return nil, err
	}
	return &HTTPPoster{client: c, token: token}, nil
}

// Report posts r; nil means the hub acknowledged it (durable).
func (p *HTTPPoster) Report(ctx context.Context, r hub.Report) error {
	token, err := p.token()
	if err != nil {
		return fmt.Errorf("read the cluster token: %w", err)
	}
	return p.client.WithToken(token).Report(ctx, r)
}
