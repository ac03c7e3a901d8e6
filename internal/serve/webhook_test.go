package serve

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
