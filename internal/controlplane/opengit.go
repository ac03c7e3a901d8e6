package controlplane

import (
	"context"
	"fmt"
	"log/slog"

	git "github.com/go-git/go-git/v5"
)

// OpenGit opens a control plane held by an already opened git repository (an in-memory
// copy with edits, say), as Open does for a location. location names it in messages.
func OpenGit(_ context.Context, g *git.Repository, location string, opts Options) (*ControlPlane, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if g == nil {
		return nil, fmt.Errorf("open control plane %s: no repository", location)
	}
	repos := newLoadRepos(opts.RepoMap, opts.Credentials, opts.Logger)
	repo := &Repo{Location: location, git: g}
	repos.cache[location] = repo
	cp := &ControlPlane{repo: repo, repos: repos, layout: opts.Layout, opts: opts}
	if cp.layout == LayoutAuto {
		cp.layout = cp.detectLayout()
	}
	return cp, nil
}
