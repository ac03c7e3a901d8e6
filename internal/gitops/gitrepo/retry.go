package gitrepo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// Retry makes a change of a branch with a compare-and-swap: try reads the branch, makes
// the change on its tip and publishes it, moving the branch only from the tip it read.
// When someone else moved it in between (an error that is ErrConflict), try runs again on
// the new tip, up to attempts times in all (at least once). It returns try's last error;
// when every attempt conflicted, that error says so, naming what (the branch). Every write
// to a branch that fleetform does not own alone goes through here: an apply, a promotion's
// pin, a change of the control plane, an app's deployment.
func Retry(ctx context.Context, attempts int, what string, logger *slog.Logger, try func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := try(attempt)
		switch {
		case !errors.Is(err, ErrConflict):
			return err
		case attempt >= attempts && attempts > 1:
			return fmt.Errorf("%w after %d attempts: others keep writing to %s", err, attempt, what)
		case attempt >= attempts:
			return err
		case ctx.Err() != nil:
			return ctx.Err()
		}
		if logger != nil {
			logger.InfoContext(ctx, "the branch moved: making the change again on its new tip", "branch", what, "attempt", attempt+1)
		}
	}
}
