package gitops

import (
	"context"

	"github.com/fleetform/fleetform/internal/gitauth"
)

// Credentials choose the credential for a repository URL: nil for none (gitauth.Store).
type Credentials interface {
	For(ctx context.Context, url string) (*gitauth.Credential, error)
}

var _ Credentials = (*gitauth.Store)(nil)
