package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/fleetform/fleetform/internal/hub"
)

// ErrorBody is every error response.
type ErrorBody struct {
	// Error says what went wrong, for a person.
	Error string `json:"error"`
	// Code classifies it: a hub.Code (invalid, unauthorized, forbidden, not_found, conflict,
	// internal), or unavailable, method_not_allowed.
	Code string `json:"code"`
}

// codeStatus is the HTTP status of each hub error code (others are 500), for the server
// and, read backwards, for clients.
var codeStatus = map[hub.Code]int{
	hub.CodeInvalid:      http.StatusBadRequest,
	hub.CodeUnauthorized: http.StatusUnauthorized,
	hub.CodeForbidden:    http.StatusForbidden,
	hub.CodeNotFound:     http.StatusNotFound,
	hub.CodeConflict:     http.StatusConflict,
}

// statusOf maps a hub error code to an HTTP status.
func statusOf(code hub.Code) int {
	if status, ok := codeStatus[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

// CodeOf is the hub error code an HTTP status implies, for answers without a JSON error
// (a proxy's, or a body too large).
func CodeOf(status int) hub.Code {
	if status == http.StatusRequestEntityTooLarge {
		return hub.CodeInvalid
	}
	for code, s := range codeStatus {
		if s == status {
			return code
		}
	}
	return hub.CodeInternal
}

// writeError answers with err as JSON; errors that are not *hub.Error are logged and hidden.
func (a *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status, code, message := a.errorAnswer(r, err)
	if code == string(hub.CodeUnauthorized) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="fleetform-hub"`)
	}
	WriteJSONError(w, status, code, message)
}

// reportResult is one report's result in a batch: what writeError would have answered.
func (a *Handler) reportResult(r *http.Request, cluster string, err error) ReportResult {
	if err == nil {
		return ReportResult{Cluster: cluster, Accepted: true, Status: http.StatusAccepted}
	}
	status, code, message := a.errorAnswer(r, err)
	return ReportResult{Cluster: cluster, Status: status, Code: code, Error: message}
}

// errorAnswer is the status, code and message answering err; errors that are not *hub.Error
// are logged and hidden.
func (a *Handler) errorAnswer(r *http.Request, err error) (status int, code, message string) {
	var he *hub.Error
	switch {
	case errors.As(err, &he):
		if he.Code == hub.CodeInternal {
			a.opts.Logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		}
		return statusOf(he.Code), string(he.Code), he.Message
	case r.Context().Err() != nil:
		// The client went away; nobody reads the answer.
		return http.StatusServiceUnavailable, "unavailable", "the request was cancelled"
	default:
		a.opts.Logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		return http.StatusInternalServerError, string(hub.CodeInternal), "internal error"
	}
}

// WriteJSONError answers with the API's error shape, ErrorBody.
func WriteJSONError(w http.ResponseWriter, status int, code, message string) {
	_ = WriteJSON(w, status, ErrorBody{Error: message, Code: code})
}

// WriteJSON answers with v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes()) // a failed write means the client went away: nobody to tell
	return nil
}

// decode reads a JSON body into v strictly: one object, no unknown fields, at most
// MaxBodyBytes. Problems are hub.CodeInvalid errors with a message for the client.
func (a *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return DecodeJSON(w, r, v, a.opts.MaxBodyBytes)
}

// DecodeJSON reads a JSON body into v as the API does: one object, no unknown fields, at
// most limit bytes. Problems are hub.CodeInvalid errors with a message for the client.
func DecodeJSON(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return decodeError(err, limit)
		}
		return hub.Errorf(hub.CodeInvalid, "malformed JSON: data after the object")
	}
	return nil
}

func decodeError(err error, limit int64) error {
	var maxErr *http.MaxBytesError
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &maxErr):
		return hub.Errorf(hub.CodeInvalid, "request body is larger than %d bytes", limit)
	case errors.Is(err, io.EOF):
		return hub.Errorf(hub.CodeInvalid, "request body is empty: want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return hub.Errorf(hub.CodeInvalid, "malformed JSON: unexpected end of the body")
	case errors.As(err, &syntaxErr):
		return hub.Errorf(hub.CodeInvalid, "malformed JSON at byte %d: %s", syntaxErr.Offset, syntaxErr.Error())
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "the body"
		}
		return hub.Errorf(hub.CodeInvalid, "%s: want a JSON %s, got %s", field, jsonKind(typeErr.Type.Kind().String()), typeErr.Value)
	}
	// Unknown fields, bad times and the like: encoding/json's message names the problem.
	return hub.Errorf(hub.CodeInvalid, "invalid JSON: %s", err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "string":
		return "string"
	case "bool":
		return "boolean"
	}
	return "number"
}

// statusRecorder remembers the status written, for metrics.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// headerProbe captures what the mux's own 404/405 handlers would write.
type headerProbe struct {
	header http.Header
	status int
}

func (p *headerProbe) Header() http.Header         { return p.header }
func (p *headerProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *headerProbe) WriteHeader(code int)        { p.status = code }
