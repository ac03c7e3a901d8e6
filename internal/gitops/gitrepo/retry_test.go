package gitrepo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
)

// TestRetry: a change is made again while its branch keeps moving, up to the attempts
// given; any other error, and a stopped context, end it at once.
func TestRetry(t *testing.T) {
	moved := fmt.Errorf("publish dev: %w", gitrepo.ErrConflict)
	other := errors.New("disk full")
	tests := []struct {
		name     string
		attempts int
		results  []error // what each try returns
		want     error
		tries    int
	}{
		{"first try", 3, []error{nil}, nil, 1},
		{"moved twice", 3, []error{moved, moved, nil}, nil, 3},
		{"another error", 3, []error{moved, other}, other, 2},
		{"kept moving", 3, []error{moved, moved, moved}, gitrepo.ErrConflict, 3},
		{"one attempt", 1, []error{moved}, gitrepo.ErrConflict, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tries := 0
			err := gitrepo.Retry(t.Context(), tt.attempts, "dev", nil, func(attempt int) error {
				tries++
				if attempt != tries {
					t.Errorf("attempt %d told %d", tries, attempt)
				}
				return tt.results[tries-1]
			})
			if tries != tt.tries || !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("%d tries, %v; want %d tries, %v", tries, err, tt.tries, tt.want)
			}
			if tt.name == "kept moving" && !strings.Contains(fmt.Sprint(err), "after 3 attempts: others keep writing to dev") {
				t.Errorf("error %q does not say the attempts", err)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tries := 0
	err := gitrepo.Retry(ctx, 5, "dev", nil, func(int) error { tries++; return moved })
	if tries != 1 || !errors.Is(err, context.Canceled) {
		t.Errorf("stopped: %d tries, %v; want 1 try and the context's error", tries, err)
	}
}
