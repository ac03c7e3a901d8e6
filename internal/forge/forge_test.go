package forge_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/forge"
)

func TestMarker(t *testing.T) {
	t.Parallel()
	if got, want := forge.Marker("dev"), "<!-- fleetform:environment=dev -->"; got != want {
		t.Errorf("Marker(dev) = %q, want %q", got, want)
	}
	if got, want := forge.BranchPrefix("dev"), "fleetform/dev/"; got != want {
		t.Errorf("BranchPrefix(dev) = %q, want %q", got, want)
	}
}

func TestOwned(t *testing.T) {
	t.Parallel()
	body := "Rendered by fleetform.\n\n" + forge.Marker("dev") + "\n"
	tests := []struct {
		name string
		pr   forge.PullRequest
		env  string
		want bool
	}{
		{"fleetform's own", forge.PullRequest{Head: "fleetform/dev/20260101-abc", Body: body}, "dev", true},
		{"marker anywhere in the body", forge.PullRequest{Head: "fleetform/dev/x", Body: "text " + forge.Marker("dev") + " more"}, "dev", true},
		{"human PR on a fleetform-looking branch, no marker", forge.PullRequest{Head: "fleetform/dev/hotfix", Body: "manual fix", Author: "alice"}, "dev", false},
		{"human PR, empty body", forge.PullRequest{Head: "fleetform/dev/hotfix"}, "dev", false},
		{"marker but another head prefix", forge.PullRequest{Head: "deployment/2026-01-01-00-00-00", Body: body}, "dev", false},
		{"marker but the bare prefix without slash", forge.PullRequest{Head: "fleetform/devx/1", Body: body}, "dev", false},
		{"marker but branch is the prefix's parent", forge.PullRequest{Head: "fleetform/dev", Body: body}, "dev", false},
		{"another environment's PR", forge.PullRequest{Head: "fleetform/prod/1", Body: forge.Marker("prod")}, "dev", false},
		{"another environment's branch with this marker", forge.PullRequest{Head: "fleetform/prod/1", Body: body}, "dev", false},
		{"this branch with another environment's marker", forge.PullRequest{Head: "fleetform/dev/1", Body: forge.Marker("prod")}, "dev", false},
		{"env that is a prefix of another's marker", forge.PullRequest{Head: "fleetform/dev/1", Body: forge.Marker("dev-eu")}, "dev", false},
		{"from a fork", forge.PullRequest{Head: "fleetform/dev/1", Body: body, CrossRepository: true}, "dev", false},
		{"empty environment", forge.PullRequest{Head: "fleetform//1", Body: forge.Marker("")}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := forge.Owned(tt.pr, tt.env); got != tt.want {
				t.Errorf("Owned(%+v, %q) = %v, want %v", tt.pr, tt.env, got, tt.want)
			}
		})
	}
}

func TestRateLimitError(t *testing.T) {
	t.Parallel()
	reset := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		err  *forge.RateLimitError
		want string
	}{
		{&forge.RateLimitError{Reset: reset, Message: "API rate limit exceeded for user ID 1."},
			"rate limit exceeded (resets at 2030-01-01T00:00:00Z): API rate limit exceeded for user ID 1."},
		{&forge.RateLimitError{Secondary: true, RetryAfter: time.Minute},
			"secondary rate limit exceeded (retry after 1m0s)"},
		{&forge.RateLimitError{}, "rate limit exceeded (reset time unknown)"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		var target *forge.RateLimitError
		if !errors.As(fmt.Errorf("wrapped: %w", tt.err), &target) || target != tt.err {
			t.Errorf("errors.As did not find %v through a wrap", tt.err)
		}
	}
}
