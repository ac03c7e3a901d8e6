package github_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	gh "github.com/google/go-github/v92/github"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/forge/github"
)

func TestNewRequiresToken(t *testing.T) {
	t.Parallel()
	if c, err := github.New(""); err == nil {
		t.Errorf("New(\"\") = %v, want an error", c)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	c, err := github.New(token, github.WithBaseURL("https://ghe.example.com/%zz"))
	if err == nil {
		t.Errorf("New with an invalid base URL = %v, want an error", c)
	}
}

// TestEnterpriseBaseURL serves at the server root (no fakeGitHub prefix stripping) and checks
// that both spellings of a GitHub Enterprise Server URL send requests under /api/v3/.
func TestEnterpriseBaseURL(t *testing.T) {
	t.Parallel()
	for _, suffix := range []string{"", "/", "/api/v3/"} {
		t.Run("base"+suffix, func(t *testing.T) {
			t.Parallel()
			var (
				mu    sync.Mutex
				paths []string
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				paths = append(paths, r.Method+" "+r.URL.Path)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, "[]")
			}))
			t.Cleanup(srv.Close)
			c, err := github.New(token, github.WithBaseURL(srv.URL+suffix))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if _, err := c.ListOpen(t.Context(), gitops, "main"); err != nil {
				t.Fatalf("ListOpen: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if want := "GET /api/v3/repos/octocat/Hello-World/pulls"; len(paths) != 1 || paths[0] != want {
				t.Errorf("requests %q, want [%q]", paths, want)
			}
		})
	}
}

// roundTripper answers every request from a function, without a network.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDefaultsToGitHubDotCom checks, through WithHTTPClient, that without WithBaseURL the client
// talks to https://api.github.com/ and uses the given HTTP client.
func TestDefaultsToGitHubDotCom(t *testing.T) {
	t.Parallel()
	var urls []string
	hc := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		urls = append(urls, r.URL.String())
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("Authorization = %q, want the bearer token", got)
		}
		return &http.Response{
			StatusCode: http.StatusOK, Request: r,
			Header: http.Header{"Content-Type": {"application/json"}},
			Body:   io.NopCloser(strings.NewReader("[]")),
		}, nil
	})}
	c, err := github.New(token, github.WithHTTPClient(hc))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if _, err := c.ListOpen(t.Context(), gitops, "main"); err != nil {
		t.Fatalf("ListOpen: %v", err)
	}
	want := "https://api.github.com/repos/octocat/Hello-World/pulls?base=main&page=1&per_page=100&state=open"
	if len(urls) != 1 || urls[0] != want {
		t.Errorf("requests %q, want [%q]", urls, want)
	}
	if _, ok := hc.Transport.(roundTripper); !ok {
		t.Errorf("New modified the caller's http.Client: its transport is now %T", hc.Transport)
	}
}

// rateLimitHeaders are GitHub's headers past the primary rate limit; the reset is
// 2030-01-01T00:00:00Z.
var rateLimitHeaders = map[string]string{
	"X-Ratelimit-Limit":     "5000",
	"X-Ratelimit-Remaining": "0",
	"X-Ratelimit-Used":      "5000",
	"X-Ratelimit-Reset":     "1893456000",
	"X-Ratelimit-Resource":  "core",
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	reset := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		status  int
		payload string
		headers map[string]string
		want    forge.RateLimitError
		wantMsg string
	}{
		{"primary 403", http.StatusForbidden, "error-403-rate-limit.json", rateLimitHeaders,
			forge.RateLimitError{Reset: reset, Message: "API rate limit exceeded for user ID 3."},
			"rate limit exceeded (resets at 2030-01-01T00:00:00Z): API rate limit exceeded for user ID 3."},
		{"primary 429", http.StatusTooManyRequests, "error-403-rate-limit.json", rateLimitHeaders,
			forge.RateLimitError{Reset: reset, Message: "API rate limit exceeded for user ID 3."},
			"rate limit exceeded (resets at 2030-01-01T00:00:00Z)"},
		{"secondary 403 with retry-after", http.StatusForbidden, "error-403-secondary-rate-limit.json", map[string]string{"Retry-After": "60"},
			forge.RateLimitError{Secondary: true, RetryAfter: time.Minute},
			"secondary rate limit exceeded (retry after 1m0s): You have exceeded a secondary rate limit."},
		{"429 with retry-after only", http.StatusTooManyRequests, "error-403-rate-limit.json", map[string]string{"Retry-After": "30"},
			forge.RateLimitError{RetryAfter: 30 * time.Second, Message: "API rate limit exceeded for user ID 3."},
			"rate limit exceeded (retry after 30s): API rate limit exceeded for user ID 3."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.handle(listPath, func(w http.ResponseWriter, _ *http.Request) {
				serveFile(t, w, tt.status, tt.payload, tt.headers)
			})
			_, err := f.client().ListOpen(t.Context(), gitops, "main")
			var limit *forge.RateLimitError
			if !errors.As(err, &limit) {
				t.Fatalf("ListOpen error = %v, want a *forge.RateLimitError", err)
			}
			if !limit.Reset.Equal(tt.want.Reset) || limit.RetryAfter != tt.want.RetryAfter || limit.Secondary != tt.want.Secondary {
				t.Errorf("rate limit = %+v, want %+v", limit, tt.want)
			}
			if tt.want.Message != "" && limit.Message != tt.want.Message {
				t.Errorf("message = %q, want %q", limit.Message, tt.want.Message)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) || !strings.HasPrefix(err.Error(), "github: list open pull requests") {
				t.Errorf("error %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /repos/octocat/Hello-World/pulls", func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusUnauthorized, "error-401.json", nil)
	})
	_, err := f.client().Create(t.Context(), gitops, newChange())
	if !errors.Is(err, forge.ErrUnauthorized) {
		t.Fatalf("Create error = %v, want forge.ErrUnauthorized", err)
	}
	if !strings.Contains(err.Error(), "401 Bad credentials") || strings.Contains(err.Error(), token) {
		t.Errorf("error %q: want GitHub's 401 message and no token", err)
	}
}

func TestNotFoundHint(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("PATCH /repos/octocat/Hello-World/pulls/9", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`)
	})
	err := f.client().Close(t.Context(), gitops, 9, "")
	if err == nil || !strings.Contains(err.Error(), "cannot see the repository") {
		t.Errorf("Close error = %v, want the 404 hint", err)
	}
}

// TestErrorsNeverCarryToken has a misbehaving server echo the Authorization header into its
// error messages: the token must still appear nowhere, and GitHub's error types (which hold the
// request and so its headers) must not be reachable from the error.
func TestErrorsNeverCarryToken(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusInternalServerError} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.handle(listPath, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(status)
				fmt.Fprintf(w, `{"message":"rejected %s","errors":[{"resource":"PullRequest","code":"custom","message":"%s"}]}`,
					r.Header.Get("Authorization"), r.Header.Get("Authorization"))
			})
			_, err := f.client().ListOpen(t.Context(), gitops, "main")
			if err == nil {
				t.Fatal("ListOpen: want an error")
			}
			if strings.Contains(err.Error(), token) || strings.Contains(fmt.Sprintf("%+v", err), token) {
				t.Errorf("error leaks the token: %v", err)
			}
			if !strings.Contains(err.Error(), "REDACTED") {
				t.Errorf("error %q: want the echoed token shown as REDACTED", err)
			}
			var respErr *gh.ErrorResponse
			var rateErr *gh.RateLimitError
			if errors.As(err, &respErr) || errors.As(err, &rateErr) {
				t.Errorf("error exposes a go-github error holding the request: %v", err)
			}
		})
	}
}

func TestContextCanceled(t *testing.T) {
	t.Parallel()
	f := newFake(t) // no handler: a request would fail the test
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := f.client().ListOpen(ctx, gitops, "main")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("ListOpen error = %v, want context.Canceled", err)
	}
}

func TestTransportErrorIsRedactedButUnwraps(t *testing.T) {
	t.Parallel()
	errDial := fmt.Errorf("proxy refused %q", "Bearer "+token)
	hc := &http.Client{Transport: roundTripper(func(*http.Request) (*http.Response, error) { return nil, errDial })}
	c, err := github.New(token, github.WithHTTPClient(hc))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	err = c.DeleteBranch(t.Context(), gitops, "fleetform/dev/x")
	if !errors.Is(err, errDial) {
		t.Errorf("DeleteBranch error = %v, want it to wrap the transport error", err)
	}
	if err != nil && strings.Contains(err.Error(), token) {
		t.Errorf("error leaks the token: %v", err)
	}
}
