package hub

import (
	"errors"
	"fmt"
)

// Code classifies an Error; the API maps it to an HTTP status.
type Code string

// Error codes.
const (
	CodeInvalid      Code = "invalid"
	CodeUnauthorized Code = "unauthorized"
	CodeForbidden    Code = "forbidden"
	CodeNotFound     Code = "not_found"
	CodeConflict     Code = "conflict"
	CodeInternal     Code = "internal"
)

// Error is an error a caller can act on, with a message safe to show to the client.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, CodeInternal for errors that are not *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// ErrNotFound is what stores return for a missing row.
var ErrNotFound = &Error{Code: CodeNotFound, Message: "not found"}

// ErrExists is what stores return when a row that must be new exists.
var ErrExists = &Error{Code: CodeConflict, Message: "already exists"}
