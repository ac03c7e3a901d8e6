package fleet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fleetform/fleetform/internal/access"
)

// The outcomes a use case ends in other than success, each with the result that explains it
// where there is one. Its callers choose what each means to their users from these alone:
//
//	outcome        CLI exit code   HTTP status
//	UsageError     2               400
//	RefusedError   3               409
//	ForbiddenError 3               403
//	InvalidError   1               422
//	ErrConflict    1               409
//	another error  1               500

// UsageError is a request that is wrong in itself: a missing or contradictory option, a
// name the control plane does not declare where one must be given.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// Usage marks err as a wrong request (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err}
}

// Usagef is Usage of a formatted error.
func Usagef(format string, args ...any) error { return Usage(fmt.Errorf(format, args...)) }

// RefusedError is an operation a gate or a safety rule refused: nothing was written. Reasons
// are the unmet conditions, one sentence each.
type RefusedError struct {
	Reasons []string
	// Err is the refusal's cause when it is an error of a lower layer (a safety rule).
	Err error
}

func (e *RefusedError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return "refused: " + strings.Join(e.Reasons, "; ")
}

// Unwrap returns the cause.
func (e *RefusedError) Unwrap() error { return e.Err }

// InvalidError is input with errors: the result that comes with it locates each one.
type InvalidError struct {
	Errors int
	// Err is the error of the layer below that says so, when there is one.
	Err error
}

func (e *InvalidError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("the input has %d error(s)", e.Errors)
}

// Unwrap returns the error of the layer below.
func (e *InvalidError) Unwrap() error { return e.Err }

// ErrConflict is a write that lost a race with another writer too many times: nothing was
// written, and the request can be made again.
var ErrConflict = errors.New("conflict")

// ForbiddenError is a request the access policies do not allow the identity to make:
// nothing was written. The decision says why.
type ForbiddenError = access.DeniedError

// IsForbidden reports whether err is a request the access policies refused.
func IsForbidden(err error) bool {
	var f *ForbiddenError
	return errors.As(err, &f)
}

// IsUsage reports whether err is a wrong request.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// IsRefused reports whether err is a refusal.
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// IsInvalid reports whether err is input with errors.
func IsInvalid(err error) bool {
	var i *InvalidError
	return errors.As(err, &i)
}
