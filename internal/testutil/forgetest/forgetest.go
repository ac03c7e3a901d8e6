// Package forgetest provides a hand-written fake of forge.PullRequests for tests.
package forgetest

import (
	"context"
	"fmt"

	"github.com/fleetform/fleetform/internal/forge"
)

// PullRequests is a fake forge.PullRequests: each method calls the Func field of the same name.
// A method whose Func is nil returns an error saying so, so a test notices an unexpected call.
type PullRequests struct {
	ListOpenFunc     func(ctx context.Context, r forge.Repo, base string) ([]forge.PullRequest, error)
	CreateFunc       func(ctx context.Context, r forge.Repo, req forge.NewChangeRequest) (forge.PullRequest, error)
	CloseFunc        func(ctx context.Context, r forge.Repo, number int, comment string) error
	DeleteBranchFunc func(ctx context.Context, r forge.Repo, branch string) error
}

var _ forge.PullRequests = (*PullRequests)(nil)

// ListOpen calls ListOpenFunc.
func (p *PullRequests) ListOpen(ctx context.Context, r forge.Repo, base string) ([]forge.PullRequest, error) {
	if p.ListOpenFunc == nil {
		return nil, unexpected("ListOpen")
	}
	return p.ListOpenFunc(ctx, r, base)
}

// Create calls CreateFunc.
func (p *PullRequests) Create(ctx context.Context, r forge.Repo, req forge.NewChangeRequest) (forge.PullRequest, error) {
	if p.CreateFunc == nil {
		return forge.PullRequest{}, unexpected("Create")
	}
	return p.CreateFunc(ctx, r, req)
}

// Close calls CloseFunc.
func (p *PullRequests) Close(ctx context.Context, r forge.Repo, number int, comment string) error {
	if p.CloseFunc == nil {
		return unexpected("Close")
	}
	return p.CloseFunc(ctx, r, number, comment)
}

// DeleteBranch calls DeleteBranchFunc.
func (p *PullRequests) DeleteBranch(ctx context.Context, r forge.Repo, branch string) error {
	if p.DeleteBranchFunc == nil {
		return unexpected("DeleteBranch")
	}
	return p.DeleteBranchFunc(ctx, r, branch)
}

func unexpected(method string) error {
	return fmt.Errorf("forgetest: unexpected call to %s (%sFunc is nil)", method, method)
}

// CommitStatuses is a fake forge.CommitStatuses that calls SetStatusFunc.
type CommitStatuses struct {
	SetStatusFunc func(ctx context.Context, r forge.Repo, commit string, s forge.CommitStatus) error
}

var _ forge.CommitStatuses = (*CommitStatuses)(nil)

// SetStatus calls SetStatusFunc.
func (c *CommitStatuses) SetStatus(ctx context.Context, r forge.Repo, commit string, s forge.CommitStatus) error {
	if c.SetStatusFunc == nil {
		return unexpected("SetStatus")
	}
	return c.SetStatusFunc(ctx, r, commit, s)
}
