package serve

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/repourl"
)

// WebhookSecretEnv is the environment variable that holds the webhooks' secret.
const WebhookSecretEnv = "FLEETFORM_WEBHOOK_SECRET" //nolint:gosec // the variable's name, not a secret

// maxWebhookBody bounds a webhook's payload (GitHub caps its own at 25 MB).
const maxWebhookBody = 25 << 20

// Triggerer is told which repository a push event names.
type Triggerer interface {
	Trigger(repoURL string) bool
}

// Webhooks answers POST /api/v1/webhooks/git: push events of GitHub (X-Hub-Signature-256,
// HMAC-SHA256 of the body with the secret), Gitea and Forgejo (X-Gitea-Signature or
// X-Forgejo-Signature, the same HMAC in hex) and GitLab (X-Gitlab-Token, the secret
// itself). A missing or wrong signature is 401 and triggers nothing; a repository that is
// not a source is 202 and ignored.
type Webhooks struct {
	secret []byte
	target Triggerer
	logger *slog.Logger
	// reading bounds the bodies read at once before their signature is known: each may be
	// 25 MB, and nobody is authenticated yet.
	reading chan struct{}
	// refusedLog rate-limits the log line of refused webhooks.
	refusedLog rateLimit
}

// maxUnverifiedReads is how many webhook bodies are read at once before their signature is
// checked; more wait for none: they are answered 503 at once.
const maxUnverifiedReads = 4

// NewWebhooks returns the webhook handler; with no secret every webhook is refused.
func NewWebhooks(secret string, target Triggerer, logger *slog.Logger) *Webhooks {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Webhooks{secret: []byte(secret), target: target, logger: logger, reading: make(chan struct{}, maxUnverifiedReads),
		refusedLog: rateLimit{every: time.Minute}}
}

// WebhookAnswer is the answer to an accepted webhook.
type WebhookAnswer struct {
	// Triggered tells whether the repository is a source (its sync was asked for).
	Triggered bool `json:"triggered"`
}

func (wh *Webhooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
		return
	}
	if reason := wh.precheck(r.Header); reason != "" { // refused before a byte of the body is read
		wh.refuse(w, r, reason)
		return
	}
	select {
	case wh.reading <- struct{}{}:
		defer func() { <-wh.reading }()
	default:
		writeError(w, http.StatusServiceUnavailable, "busy", "too many webhooks are being read: send it again")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil || len(body) > maxWebhookBody {
		writeError(w, http.StatusBadRequest, "invalid", "the payload could not be read, or is larger than 25 MB")
		return
	}
	if reason := wh.verify(r.Header, body); reason != "" {
		wh.refuse(w, r, reason)
		return
	}
	triggered := false
	for _, u := range repositoryURLs(body) {
		if wh.target.Trigger(u) {
			triggered = true
			break
		}
	}
	if !triggered {
		urls := repositoryURLs(body)
		for i := range urls {
			urls[i] = repourl.Redact(urls[i]) // a payload's URLs may hold credentials
		}
		wh.logger.DebugContext(r.Context(), "webhook for a repository that is not a source", "urls", strings.Join(urls, " "))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(WebhookAnswer{Triggered: triggered})
}

// signatureHeaders are the headers GitHub, Gitea, Forgejo and Gogs sign a body in.
var signatureHeaders = []string{"X-Hub-Signature-256", "X-Gitea-Signature", "X-Forgejo-Signature", "X-Gogs-Signature"}

// precheck returns why a webhook is refused from its headers alone (webhooks off, no
// signature at all, a GitLab token that is not the secret), or "" when its body must be
// read to know.
func (wh *Webhooks) precheck(h http.Header) string {
	if len(wh.secret) == 0 {
		return "webhooks are off: set " + WebhookSecretEnv + " on the server and the same secret on the webhook"
	}
	if tok := h.Get("X-Gitlab-Token"); tok != "" {
		if subtle.ConstantTimeCompare([]byte(tok), wh.secret) == 1 {
			return ""
		}
		return "X-Gitlab-Token is not the secret"
	}
	for _, name := range signatureHeaders {
		if h.Get(name) != "" {
			return ""
		}
	}
	return "no signature: X-Hub-Signature-256, X-Gitea-Signature, X-Forgejo-Signature or X-Gitlab-Token is required"
}

// refuse answers 401, and logs it at most once a minute (with how many were refused since).
func (wh *Webhooks) refuse(w http.ResponseWriter, r *http.Request, reason string) {
	if n, ok := wh.refusedLog.allow(time.Now()); ok {
		wh.logger.WarnContext(r.Context(), "webhook refused", "reason", reason, "remote", r.RemoteAddr, "refused_since_last_line", n)
	}
	writeError(w, http.StatusUnauthorized, "unauthorized", reason)
}

// verify returns why a webhook is refused, or "" when its signature is the secret's.
func (wh *Webhooks) verify(h http.Header, body []byte) string {
	if reason := wh.precheck(h); reason != "" || h.Get("X-Gitlab-Token") != "" {
		return reason
	}
	mac := hmac.New(sha256.New, wh.secret)
	mac.Write(body)
	want := mac.Sum(nil)
	for _, name := range signatureHeaders {
		sig := h.Get(name)
		if sig == "" {
			continue
		}
		got, err := hex.DecodeString(strings.TrimPrefix(sig, "sha256="))
		if err == nil && hmac.Equal(got, want) {
			return ""
		}
		return name + " does not match the body signed with the secret"
	}
	return "no signature: X-Hub-Signature-256, X-Gitea-Signature, X-Forgejo-Signature or X-Gitlab-Token is required"
}

// repositoryURLs are the URLs a push event gives its repository by (GitHub, Gitea and
// Forgejo: repository.*; GitLab: project.* and repository.*).
func repositoryURLs(body []byte) []string {
	var ev struct {
		Repository map[string]any `json:"repository"`
		Project    map[string]any `json:"project"`
	}
	if json.Unmarshal(body, &ev) != nil {
		return nil
	}
	var out []string
	for _, m := range []map[string]any{ev.Repository, ev.Project} {
		for _, k := range []string{"clone_url", "html_url", "ssh_url", "git_url", "git_http_url", "git_ssh_url", "web_url", "http_url", "url", "homepage"} {
			if s, ok := m[k].(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// rateLimit lets an event through at most once per every; it counts the others.
type rateLimit struct {
	mu      sync.Mutex
	every   time.Duration
	last    time.Time
	dropped int
}

// allow reports whether the event at now goes through, with how many did not since the last
// that did.
func (l *rateLimit) allow(now time.Time) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.last.IsZero() && now.Sub(l.last) < l.every {
		l.dropped++
		return 0, false
	}
	n := l.dropped
	l.last, l.dropped = now, 0
	return n, true
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: msg, Code: code})
}
