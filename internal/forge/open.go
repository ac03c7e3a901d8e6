package forge

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
)

// OpenPullRequest opens fleetform's pull request req in r: labelled "fleetform", and, for a scope (an
// environment, or "<env>/app/<workload>"), marked as the scope's (Marker) with fleetform's
// earlier pull requests of the scope into the same base closed (Supersede). It returns the
// pull request and the numbers closed; a failure to close one is an error along with them.
// Every pull request fleetform opens goes through here.
func OpenPullRequest(ctx context.Context, p PullRequests, r Repo, scope string, req NewChangeRequest, logger *slog.Logger) (PullRequest, []int, error) {
	if !slices.Contains(req.Labels, "fleetform") {
		req.Labels = append([]string{"fleetform"}, req.Labels...)
	}
	if scope != "" && !strings.Contains(req.Body, Marker(scope)) {
		req.Body = strings.TrimRight(req.Body, "\n") + "\n\n" + Marker(scope) + "\n"
	}
	pr, err := p.Create(ctx, r, req)
	if err != nil {
		return PullRequest{}, nil, fmt.Errorf("open pull request: %w", err)
	}
	if scope == "" {
		return pr, nil, nil
	}
	closed, err := Supersede(ctx, p, r, req.Base, scope, pr.Number, logger)
	return pr, closed, err
}
