package serve

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/repourl"
)

// triggers records the repositories webhooks named; known are the sources.
type triggers struct {
	known map[string]bool
	got   []string
}

func (tr *triggers) Trigger(u string) bool {
	tr.got = append(tr.got, u)
	return tr.known[repourl.Key(u)]
}

func sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

func payload(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "webhooks", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWebhooks: a push event signed with the secret (GitHub, Gitea/Forgejo, GitLab) asks for
// a sync of its repository when it is a source; a bad or missing signature is 401 and
// triggers nothing; an unknown repository is 202 and ignored.
func TestWebhooks(t *testing.T) {
	const secret = "s3cret"
	github, gitlab, gitea := payload(t, "github-push.json"), payload(t, "gitlab-push.json"), payload(t, "gitea-push.json")
	tests := []struct {
		name      string
		body      []byte
		headers   map[string]string
		secret    string
		status    int
		triggered bool
	}{
		{"github", github, map[string]string{"X-Hub-Signature-256": "sha256=" + sign(secret, github), "X-GitHub-Event": "push"}, secret, 202, true},
		{"gitlab", gitlab, map[string]string{"X-Gitlab-Token": secret, "X-Gitlab-Event": "Push Hook"}, secret, 202, true},
		{"gitea", gitea, map[string]string{"X-Gitea-Signature": sign(secret, gitea)}, secret, 202, false},
		{"forgejo", gitea, map[string]string{"X-Forgejo-Signature": sign(secret, gitea)}, secret, 202, false},
		{"github, wrong secret", github, map[string]string{"X-Hub-Signature-256": "sha256=" + sign("other", github)}, secret, 401, false},
		{"github, body changed", append(bytes.Clone(github), ' '), map[string]string{"X-Hub-Signature-256": "sha256=" + sign(secret, github)}, secret, 401, false},
		{"gitlab, wrong token", gitlab, map[string]string{"X-Gitlab-Token": "guess"}, secret, 401, false},
		{"no signature", github, nil, secret, 401, false},
		{"no secret on the server", github, map[string]string{"X-Hub-Signature-256": "sha256=" + sign("", github)}, "", 401, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &triggers{known: map[string]bool{
				repourl.Key("https://github.com/example-org/platform"):         true,
				repourl.Key("git@gitlab.example.com:example-org/platform.git"): true,
			}}
			rec := httptest.NewRecorder()
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", bytes.NewReader(tt.body))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			NewWebhooks(tt.secret, tr, nil).ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
			if tt.status != 202 {
				if len(tr.got) > 0 {
					t.Errorf("a refused webhook triggered %v", tr.got)
				}
				return
			}
			var ans WebhookAnswer
			if err := json.Unmarshal(rec.Body.Bytes(), &ans); err != nil || ans.Triggered != tt.triggered {
				t.Errorf("answer %s (%v), want triggered %v", rec.Body, err, tt.triggered)
			}
		})
	}
}

// TestRepoKey: one repository, whatever URL form names it.
func TestRepoKey(t *testing.T) {
	same := []string{
		"https://github.com/Org/Repo", "https://github.com/Org/Repo.git", "https://GitHub.com/Org/Repo/",
		"git@github.com:Org/Repo.git", "ssh://git@github.com/Org/Repo", "https://user@github.com:443/Org/Repo.git",
	}
	for _, u := range same {
		if repourl.Key(u) != repourl.Key(same[0]) {
			t.Errorf("%s -> %s, want %s", u, repourl.Key(u), repourl.Key(same[0]))
		}
	}
	for _, u := range []string{"https://github.com/Org/Other", "https://github.com/org/repo", "https://gitlab.com/Org/Repo"} {
		if repourl.Key(u) == repourl.Key(same[0]) {
			t.Errorf("%s is not %s", u, same[0])
		}
	}
}

// TestRecordsFitTheHub: what serve records is cut to what the hub accepts, and URLs lose
// their user information (the hub refuses them otherwise).
func TestRecordsFitTheHub(t *testing.T) {
	long := strings.Repeat("é", hubMaxError()) // two bytes each
	rec := fitted(hub.SyncRecord{Error: long, Failed: make([]hub.FailedAssignment, hub.MaxFailedAssignments+5)})
	if len(rec.Error) > hub.MaxErrorLength || !utf8.ValidString(rec.Error) || !strings.HasSuffix(rec.Error, "(cut)") {
		t.Errorf("error cut to %d bytes (valid UTF-8: %v)", len(rec.Error), utf8.ValidString(rec.Error))
	}
	if len(rec.Failed) != hub.MaxFailedAssignments {
		t.Errorf("%d failed assignments kept", len(rec.Failed))
	}
	for _, raw := range []string{"https://user:token@git.example.com/org/repo.git", "https://git.example.com/org/repo.git?private_token=token"} {
		if got := shownURL(raw); got != "https://git.example.com/org/repo.git" {
			t.Errorf("shown URL %s", got)
		}
	}
}

func hubMaxError() int { return hub.MaxErrorLength }

// countingBody counts what is read of a request body; blocked, it waits for release first.
type countingBody struct {
	read    atomic.Int64
	started chan struct{}
	release chan struct{}
}

func (b *countingBody) Read(p []byte) (int, error) {
	if b.release != nil {
		select {
		case b.started <- struct{}{}:
		default:
		}
		<-b.release
	}
	n := min(len(p), 1024)
	b.read.Add(int64(n))
	return n, nil // an endless body
}

func (b *countingBody) Close() error { return nil }

// TestWebhookBodiesReadOnlyWhenSigned: a webhook without a signature, or with a wrong
// GitLab token, is refused without reading its body; at most maxUnverifiedReads bodies are
// read at once before their signature is known, the next is answered 503 at once. So
// unauthenticated requests cannot make serve hold many 25 MB bodies.
func TestWebhookBodiesReadOnlyWhenSigned(t *testing.T) {
	wh := NewWebhooks("s3cret", nil, nil)
	for name, header := range map[string]http.Header{"unsigned": {}, "wrong GitLab token": {"X-Gitlab-Token": []string{"nope"}}} {
		body := &countingBody{}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", nil)
		req.Body, req.Header = body, header
		rec := httptest.NewRecorder()
		wh.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized || body.read.Load() != 0 {
			t.Errorf("%s: %d after reading %d bytes, want 401 before reading any", name, rec.Code, body.read.Load())
		}
	}

	release := make(chan struct{})
	var wg sync.WaitGroup
	for range maxUnverifiedReads {
		body := &countingBody{started: make(chan struct{}, 1), release: release}
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", nil)
		req.Body, req.Header = body, http.Header{"X-Hub-Signature-256": []string{"sha256=00"}}
		wg.Go(func() { wh.ServeHTTP(httptest.NewRecorder(), req) })
		<-body.started // this one holds a slot
	}
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", strings.NewReader("{}"))
	req.Header.Set("X-Hub-Signature-256", "sha256=00")
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a webhook beyond %d read at once: %d, want 503", maxUnverifiedReads, rec.Code)
	}
	close(release) // the endless bodies hit the 25 MB cap and are refused
	wg.Wait()
}

// TestWebhookLogHidesCredentials: the debug line of a webhook for a repository that is not
// a source names its URLs without the credentials a payload may carry.
func TestWebhookLogHidesCredentials(t *testing.T) {
	var logs bytes.Buffer
	wh := NewWebhooks("s3cret", triggerNothing{}, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	body := []byte(`{"repository":{"clone_url":"https://deploy:t0ken@git.example.com/x.git?private_token=t0ken"}}`)
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(body)
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", bytes.NewReader(body))
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	rec := httptest.NewRecorder()
	wh.ServeHTTP(rec, req)
	if rec.Code != http.StatusAccepted || !strings.Contains(logs.String(), "git.example.com") || strings.Contains(logs.String(), "t0ken") {
		t.Errorf("%d; the log line shows a credential or no URL:\n%s", rec.Code, logs.String())
	}
}

// triggerNothing is a service with no sources.
type triggerNothing struct{}

func (triggerNothing) Trigger(string) bool { return false }

// TestRefusedWebhooksLoggedOnceAMinute: a flood of refused webhooks makes one warning a
// minute, which counts those it did not log.
func TestRefusedWebhooksLoggedOnceAMinute(t *testing.T) {
	var logs bytes.Buffer
	wh := NewWebhooks("s3cret", nil, slog.New(slog.NewTextHandler(&logs, nil)))
	for range 50 {
		req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/webhooks/git", strings.NewReader("{}"))
		rec := httptest.NewRecorder()
		wh.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("an unsigned webhook: %d", rec.Code)
		}
	}
	if n := strings.Count(logs.String(), "webhook refused"); n != 1 {
		t.Errorf("50 refused webhooks logged %d lines, want 1:\n%s", n, logs.String())
	}
	l := rateLimit{every: time.Minute}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	l.allow(at)
	for i := range 3 {
		if _, ok := l.allow(at.Add(time.Duration(i+1) * time.Second)); ok {
			t.Fatal("a second line within the minute")
		}
	}
	if n, ok := l.allow(at.Add(time.Minute)); !ok || n != 3 {
		t.Errorf("a minute later: %d dropped, %v; want 3, true", n, ok)
	}
}
