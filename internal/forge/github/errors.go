package github

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/fleetform/fleetform/internal/forge"
)

// fail turns an error from go-github into fleetform's: "github: <op>: <cause>". GitHub's error
// responses become errors that hold no HTTP request (whose headers carry the token), typed where
// a caller may branch; every message has the token redacted. Context cancellation and transport
// errors stay reachable with errors.Is/As.
func (c *Client) fail(op string, err error) error {
	return fmt.Errorf("github: %s: %w", op, c.translate(err))
}

func (c *Client) translate(err error) error {
	var (
		rateErr  *gh.RateLimitError
		abuseErr *gh.AbuseRateLimitError
		respErr  *gh.ErrorResponse
	)
	switch {
	case errors.As(err, &rateErr):
		return &forge.RateLimitError{Reset: rateErr.Rate.Reset.Time, Message: redact(rateErr.Message, c.token)}
	case errors.As(err, &abuseErr):
		limit := &forge.RateLimitError{Secondary: true, Message: redact(abuseErr.Message, c.token)}
		if abuseErr.Response != nil {
			limit.Reset, limit.RetryAfter = rateHeaders(abuseErr.Response.Header)
		}
		return limit
	case errors.As(err, &respErr):
		return c.translateResponse(respErr)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // go-github returns ctx.Err() itself: nothing to redact
	}
	return &redactedError{err: err, token: c.token}
}

// translateResponse handles GitHub error responses that are not go-github's rate limit types.
func (c *Client) translateResponse(e *gh.ErrorResponse) error {
	status := 0
	if e.Response != nil {
		status = e.Response.StatusCode
	}
	msg := redact(describe(e), c.token)
	switch {
	case status == http.StatusUnauthorized:
		return fmt.Errorf("%w: %s", forge.ErrUnauthorized, msg)
	case status == http.StatusTooManyRequests:
		limit := &forge.RateLimitError{Message: redact(e.Message, c.token)}
		limit.Reset, limit.RetryAfter = rateHeaders(e.Response.Header)
		return limit
	case status == http.StatusUnprocessableEntity && pullRequestExists(e):
		return fmt.Errorf("%w: %s", forge.ErrPullRequestExists, msg)
	case status == http.StatusNotFound:
		return fmt.Errorf("%s (GitHub also answers 404 when the token cannot see the repository)", msg)
	}
	return errors.New(msg)
}

// describe formats a GitHub error response as "METHOD URL: STATUS message (detail; detail)".
func describe(e *gh.ErrorResponse) string {
	var b strings.Builder
	if e.Response != nil {
		if req := e.Response.Request; req != nil && req.URL != nil {
			fmt.Fprintf(&b, "%s %s: ", req.Method, req.URL.Redacted())
		}
		fmt.Fprintf(&b, "%d ", e.Response.StatusCode)
	}
	b.WriteString(e.Message)
	var details []string
	for _, d := range e.Errors {
		if d.Message != "" {
			details = append(details, d.Message)
		} else {
			details = append(details, strings.Join(strings.Fields(d.Resource+" "+d.Field+" "+d.Code), " "))
		}
	}
	if len(details) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(details, "; "))
	}
	return b.String()
}

// pullRequestExists reports GitHub's answer to a second pull request for the same head:
// 422 {"message":"Validation Failed","errors":[{"resource":"PullRequest","code":"custom",
// "message":"A pull request already exists for owner:branch."}]}.
func pullRequestExists(e *gh.ErrorResponse) bool {
	for _, detail := range e.Errors {
		if strings.HasPrefix(detail.Message, "A pull request already exists") {
			return true
		}
	}
	return strings.Contains(e.Message, "A pull request already exists")
}

// refMissing reports GitHub's answer to deleting a branch that is already gone:
// 422 {"message":"Reference does not exist"}.
func refMissing(err error) bool {
	var e *gh.ErrorResponse
	return errors.As(err, &e) && e.Response != nil &&
		e.Response.StatusCode == http.StatusUnprocessableEntity && e.Message == "Reference does not exist"
}

// rateHeaders reads the reset time (x-ratelimit-reset, UTC epoch seconds) and the wait
// (retry-after, seconds) of a rate-limited response; zero values when absent.
func rateHeaders(h http.Header) (reset time.Time, retryAfter time.Duration) {
	if v, err := strconv.ParseInt(h.Get("X-Ratelimit-Reset"), 10, 64); err == nil && v > 0 {
		reset = time.Unix(v, 0).UTC()
	}
	if v, err := strconv.Atoi(h.Get("Retry-After")); err == nil && v > 0 {
		retryAfter = time.Duration(v) * time.Second
	}
	return reset, retryAfter
}

// redact replaces every occurrence of token in s.
func redact(s, token string) string {
	if token == "" {
		return s
	}
	return strings.ReplaceAll(s, token, "REDACTED")
}

// redactedError is an error whose message has the token redacted; errors.Is/As still see the
// wrapped error (a transport error, which holds no request headers).
type redactedError struct {
	err   error
	token string
}

func (e *redactedError) Error() string { return redact(e.err.Error(), e.token) }
func (e *redactedError) Unwrap() error { return e.err }

// limitBody is a RoundTripper that fails reads of a response body past limit bytes.
type limitBody struct {
	next  http.RoundTripper
	limit int64
}

func (l limitBody) RoundTrip(req *http.Request) (*http.Response, error) {
	next := l.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: l.limit, limit: l.limit}
	return resp, nil
}

type limitedBody struct {
	rc          io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly the limit from a longer one.
		var probe [1]byte
		n, err := b.rc.Read(probe[:])
		if n > 0 {
			return 0, fmt.Errorf("response body larger than %d bytes", b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
