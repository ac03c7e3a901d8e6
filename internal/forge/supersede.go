package forge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
)

// SupersededComment is the comment Supersede leaves on a pull request it closes in favour of
// pull request keep.
func SupersededComment(env string, keep int) string {
	return fmt.Sprintf("Superseded by #%d: fleetform opened a newer pull request for environment %q "+
		"with the full desired state, so this one is closed and its branch deleted.", keep, env)
}

// Supersede closes (with a comment naming the new PR) and deletes the head branch of every open
// pull request into base that is Owned for env, except keep (the new one's number); it returns
// the closed numbers. Other pull requests are never touched.
//
// keep must be a pull request number (> 0). A listed pull request whose Base is not base is
// ignored even if the PullRequests implementation returned it. Supersede goes on after a failure:
// the returned numbers are the pull requests actually closed (ascending), and the error joins
// every failure. A branch is deleted only after its pull request was closed. A nil logger logs
// nothing.
func Supersede(ctx context.Context, p PullRequests, r Repo, base, env string, keep int, logger *slog.Logger) ([]int, error) {
	if keep <= 0 {
		return nil, fmt.Errorf("supersede %s pull requests in %s: invalid new pull request number %d", env, r, keep)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	open, err := p.ListOpen(ctx, r, base)
	if err != nil {
		return nil, fmt.Errorf("supersede %s pull requests into %q in %s: %w", env, base, r, err)
	}
	comment := SupersededComment(env, keep)
	var closed []int
	var errs []error
	for _, pr := range open {
		if pr.Number == keep || pr.Base != base || !Owned(pr, env) {
			continue
		}
		if err := p.Close(ctx, r, pr.Number, comment); err != nil {
			errs = append(errs, fmt.Errorf("close superseded pull request #%d in %s: %w", pr.Number, r, err))
			continue
		}
		closed = append(closed, pr.Number)
		logger.InfoContext(ctx, "closed superseded pull request",
			"repo", r.String(), "number", pr.Number, "superseded_by", keep, "environment", env)
		if err := p.DeleteBranch(ctx, r, pr.Head); err != nil {
			errs = append(errs, fmt.Errorf("delete branch %q of superseded pull request #%d in %s: %w", pr.Head, pr.Number, r, err))
			continue
		}
		logger.InfoContext(ctx, "deleted superseded branch", "repo", r.String(), "branch", pr.Head)
	}
	slices.Sort(closed)
	return closed, errors.Join(errs...)
}
