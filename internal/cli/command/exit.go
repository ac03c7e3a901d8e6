package command

import (
	"errors"
	"fmt"

	"github.com/fleetform/fleetform/internal/fleet"
)

// ExitCode is the exit code of a command that returned err, the one place where outcomes
// become exit codes: none, ExitOK; a wrong command line or request (fleet.UsageError),
// ExitUsage; a refusal (fleet.RefusedError, or fleet.ForbiddenError by the access
// policies), ExitRefused; any other error, ExitFailed.
func ExitCode(err error) int {
	var ex *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ex):
		return ex.code
	case fleet.IsUsage(err):
		return ExitUsage
	case fleet.IsRefused(err), fleet.IsForbidden(err):
		return ExitRefused
	}
	return ExitFailed
}

// Usage marks err as a wrong command line: exit code ExitUsage.
func Usage(err error) error { return fleet.Usage(err) }

// Usagef is Usage of a formatted error.
func Usagef(format string, args ...any) error { return fleet.Usagef(format, args...) }

// Reported is err once the command printed what went wrong (its result says it): the exit
// code is err's, and nothing more is printed (nil stays nil).
func Reported(err error) error {
	if err == nil {
		return nil
	}
	return &reportedError{err: err}
}

// errFailed is the failure of a command whose printed result says what failed.
var errFailed = errors.New("the command failed (see the messages on stderr)")

// reportedError is an error the command printed already.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// Exit is an error with an exit code of its own (for what no outcome says, such as a
// command that checks a condition). A nil err prints nothing.
func Exit(code int, err error) error { return &exitError{code: code, err: err} }

// exitError carries an exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// message is what Main prints of err on stderr ("": nothing).
func message(err error) string {
	var rep *reportedError
	var ex *exitError
	switch {
	case errors.As(err, &rep):
		return ""
	case errors.As(err, &ex) && ex.err == nil:
		return ""
	}
	return err.Error()
}
