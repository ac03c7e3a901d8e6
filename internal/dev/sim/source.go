package sim

import (
	"context"

	"github.com/fleetform/fleetform/internal/gitops"
)

// GitSource reads an environment's GitOps branch.
type GitSource struct {
	Writer *gitops.Writer
	// Location is the repository (path or URL); Branch and Path where the environment is.
	Location, Branch, Path string
}

// Folders implements Source.
func (g GitSource) Folders(ctx context.Context) (string, map[string][]string, error) {
	commit, folders, err := g.Writer.Folders(ctx, g.Location, g.Branch, g.Path)
	if err != nil || commit.IsZero() {
		return "", nil, err
	}
	return commit.String(), folders, nil
}
