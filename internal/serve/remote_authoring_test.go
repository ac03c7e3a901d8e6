package serve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/gitauth"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/forgetest"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// The secrets of the remote control plane's tests: the git server's password, the forge's
// token. Neither may appear in an answer.
const (
	gitPassword = "git-s3cret-pw"
	forgeToken  = "forge-s3cret-token"
)

// remoteChanges is serve's authoring API over a remote control plane: the fixture's
// content in org/platform.git on a git server over HTTP on loopback that requires HTTP
// Basic authentication, next to a fake GitHub API, with the credentials in files.
type remoteChanges struct {
	*changesServer
	remote *gittest.Repo
	url    string // the control plane's URL
	gh     *forgetest.GitHub
	rights *allowAll
}

// allowAll lets every identity do everything; before, when set, runs first (the decision
// is taken once the change is made, before it is validated and pushed).
// When deny is set, it refuses everything with that reason instead.
type allowAll struct {
	before func()
	deny   string
}

func (a *allowAll) Decide(access.Identity, access.Request) access.Decision {
	if a.before != nil {
		a.before()
	}
	if a.deny != "" {
		return access.Decision{Reason: a.deny}
	}
	return access.Decision{Allowed: true, Reason: "allowed"}
}

func newRemoteChanges(t *testing.T, mode authoring.Mode) *remoteChanges {
	t.Helper()
	f := newFixture(t)
	root := t.TempDir()
	remote, err := gittest.InitRepo(filepath.Join(root, "org", "platform.git"), true)
	if err != nil {
		t.Fatal(err)
	}
	remote.Commit(t, "main", f.files)
	s := &remoteChanges{changesServer: &changesServer{fixture: f}, remote: remote, gh: &forgetest.GitHub{Token: forgeToken}, rights: &allowAll{}}
	mux := http.NewServeMux()
	mux.Handle("/org/", gittest.RequireBasicAuth(gittest.GitHandler(t, root), "git", gitPassword))
	mux.Handle("/api/v3/", s.gh)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/org/platform.git"
	creds, err := gitauth.New(gitauth.Config{Entries: []gitauth.Entry{
		{URL: srv.URL + "/org/", TokenFile: secretFile(t, gitPassword), AllowInsecureHTTP: true},
		{URL: srv.URL + "/api/v3/", TokenFile: secretFile(t, forgeToken), AllowInsecureHTTP: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	fl := fleet.New(fleet.Config{ControlPlane: s.url, Read: controlplane.Options{RepoMap: controlplane.RepoMap{f.appsURL: f.apps.Dir}},
		Credentials: creds, CacheDir: t.TempDir(), ForgeURL: srv.URL + "/api/v3/", Rights: s.rights, Hub: fleet.LocalHub(f.hub)})
	if _, s.admin, err = f.hub.CreateToken(t.Context(), hub.TokenAdmin, "ci-bot", time.Time{}); err != nil {
		t.Fatal(err)
	}
	s.changes = NewControlPlaneChanges(ChangesOptions{Fleet: fl, Hub: f.hub, Mode: mode, Applied: func() { f.svc.Trigger(s.url) }})
	api := httptest.NewServer(Handler(api.New(f.hub, api.Options{}), f.hub, f.svc, NewWebhooks("", f.svc, nil), s.changes.Handler()))
	t.Cleanup(api.Close)
	s.changesServer.url = api.URL
	return s
}

func secretFile(tb testing.TB, secret string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(secret+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// commit reads a commit of the remote.
func (s *remoteChanges) commit(h string) *object.Commit {
	s.t.Helper()
	g, err := git.PlainOpen(s.remote.Dir)
	if err != nil {
		s.t.Fatal(err)
	}
	c, err := g.CommitObject(plumbing.NewHash(h))
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

// noSecrets fails when an answer shows a secret.
func noSecrets(t *testing.T, what string, data []byte) {
	t.Helper()
	for _, secret := range []string{gitPassword, forgeToken} {
		if strings.Contains(string(data), secret) {
			t.Errorf("%s shows a secret: %s", what, data)
		}
	}
}

// TestChangesRemotePush: with --authoring push, a change through the API is made on serve's
// mirror of the remote control plane and pushed to it over authenticated HTTP: one commit
// on top of the remote's tip, authored by the token (or the person), committed by fleetform,
// with the Changed-By trailer; a dry run pushes nothing; no answer shows a secret.
func TestChangesRemotePush(t *testing.T) {
	s := newRemoteChanges(t, authoring.ModePush)
	tip := s.remote.Tip(t, "main")

	code, body := s.post(s.admin, "?dryRun=true", addEdge)
	noSecrets(t, "the dry run", body)
	if code != http.StatusOK || s.remote.Tip(t, "main") != tip {
		t.Fatalf("dry run: %d %s (main %s)", code, body, s.remote.Tip(t, "main"))
	}
	if p := planOf(s.result(body), "dev"); len(p.AssignmentsAdded) != 1 {
		t.Errorf("dry run's plan of dev %+v", p)
	}

	code, body = s.post(s.admin, "", addEdge)
	noSecrets(t, "the change", body)
	if code != http.StatusOK {
		t.Fatalf("change: %d %s", code, body)
	}
	res := s.result(body)
	now := s.remote.Tip(t, "main")
	if !res.Written || len(res.Commits) != 1 || res.Commits[0].Branch != "main" || res.Commits[0].Commit != now.String() {
		t.Fatalf("change %+v; the remote's main is at %s", res, now)
	}
	c := s.commit(now.String())
	if len(c.ParentHashes) != 1 || c.ParentHashes[0] != tip {
		t.Errorf("parents %v, want the remote's tip %s", c.ParentHashes, tip)
	}
	if c.Author.Name != "ci-bot" || c.Author.Email != "ci-bot@"+fleet.TokenEmailDomain ||
		c.Committer.Name != "fleetform" || c.Committer.Email != "fleetform@localhost" {
		t.Errorf("author %s <%s>, committer %s <%s>", c.Author.Name, c.Author.Email, c.Committer.Name, c.Committer.Email)
	}
	if !strings.HasPrefix(c.Message, "fleetform: add ClusterType edge in dev\n") || !strings.HasSuffix(c.Message, "\nChanged-By: ci-bot\n") {
		t.Errorf("message %q", c.Message)
	}
	if got := s.remote.Files(t, "main")["environments/dev/cluster-types/edge.yaml"]; !strings.Contains(got, "region: west") {
		t.Errorf("the pushed cluster type:\n%s", got)
	}
	events, err := s.hub.History(t.Context(), hub.HistoryFilter{Kind: hub.EventAuthoring})
	if err != nil || len(events) != 1 || events[0].Revision != now.String() {
		t.Errorf("history %+v %v", events, err)
	}

	// A person: the author is who they are, the trailer names their issuer and subject.
	pat := access.Identity{Issuer: "https://idp.example.com", Subject: "u1", Name: "Pat Doe", Email: "pat@contoso.com", Groups: []string{"platform"}}
	res, err = s.changes.Change(t.Context(), []authoring.Operation{{Op: authoring.OpAdd, Kind: "ClusterType", Name: "edge2", Env: "dev"}}, false, pat)
	if err != nil || len(res.Commits) != 1 {
		t.Fatalf("Pat's change: %+v %v", res, err)
	}
	c = s.commit(res.Commits[0].Commit)
	if c.Author.Name != "Pat Doe" || c.Author.Email != "pat@contoso.com" || c.Committer.Name != "fleetform" ||
		!strings.HasSuffix(c.Message, "\nChanged-By: Pat Doe <pat@contoso.com> (https://idp.example.com sub=u1)\n") {
		t.Errorf("Pat's commit: author %s <%s>, committer %s, message %q", c.Author.Name, c.Author.Email, c.Committer.Name, c.Message)
	}
}

// TestChangesRemotePullRequest: with --authoring pr, a change is pushed to a new branch of
// the remote and proposed as a pull request through the forge's API, with the plan as its
// body; the remote's main does not move.
func TestChangesRemotePullRequest(t *testing.T) {
	s := newRemoteChanges(t, authoring.ModePR)
	tip := s.remote.Tip(t, "main")
	code, body := s.post(s.admin, "", addEdge)
	noSecrets(t, "the change", body)
	if code != http.StatusOK {
		t.Fatalf("change: %d %s", code, body)
	}
	res := s.result(body)
	if res.PullRequest == nil || res.PullRequest.Number != 1 || res.PullRequest.URL != forgetest.PullURL("org/platform", 1) ||
		len(res.Commits) != 1 || !strings.HasPrefix(res.Commits[0].Branch, "fleetform/authoring/") {
		t.Fatalf("change %s", body)
	}
	head := res.Commits[0].Branch
	if s.remote.Tip(t, "main") != tip {
		t.Error("a pull request moved main")
	}
	if got := s.remote.Tip(t, head); got.String() != res.Commits[0].Commit {
		t.Errorf("the remote's %s is at %s, want %s", head, got, res.Commits[0].Commit)
	}
	if c := s.commit(res.Commits[0].Commit); len(c.ParentHashes) != 1 || c.ParentHashes[0] != tip || c.Author.Name != "ci-bot" {
		t.Errorf("the pull request's commit: parents %v, author %s", c.ParentHashes, c.Author.Name)
	}
	created := s.gh.Created()
	if len(created) != 1 || created[0]["head"] != head || created[0]["base"] != "main" || created[0]["title"] != "fleetform: add ClusterType edge in dev" ||
		!strings.Contains(fmt.Sprint(created[0]["body"]), "**dev**: 1 assignment(s) gained") {
		t.Errorf("pull requests created %v", created)
	}
	if errs := s.gh.Errors(); len(errs) != 0 {
		t.Errorf("forge: %v", errs)
	}
}

// TestChangesRemoteConcurrent: changes sent at the same time in push mode, each adding its
// own workload, lose nothing: each is on the remote afterwards, or was answered 409 and
// nothing of it is there.
func TestChangesRemoteConcurrent(t *testing.T) {
	s := newRemoteChanges(t, authoring.ModePush)
	const n = 8
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			op := authoring.Operation{Op: authoring.OpAdd, Kind: "Workload", Name: fmt.Sprintf("w%d", i), Labels: map[string]string{"workspace": "retail"},
				Spec: map[string]any{"deploymentTargets": []any{map[string]any{"name": "web", "environment": "dev",
					"manifests": map[string]any{"repo": "https://example.com/x", "branch": "main", "path": "."}}}}}
			body, _ := json.Marshal(ChangesRequest{Operations: []authoring.Operation{op}})
			var answer []byte
			codes[i], answer = s.post(s.admin, "", string(body))
			if codes[i] != http.StatusOK && codes[i] != http.StatusConflict {
				t.Errorf("w%d: %d %s", i, codes[i], answer)
			}
		})
	}
	wg.Wait()
	files := s.remote.Files(t, "main")
	landed := 0
	for i, code := range codes {
		there := false
		for p := range files {
			there = there || strings.HasSuffix(p, fmt.Sprintf("/w%d.yaml", i))
		}
		switch {
		case code == http.StatusOK && !there:
			t.Errorf("w%d was pushed but is not on the remote: a lost write", i)
		case code != http.StatusOK && there:
			t.Errorf("w%d was refused (%d) but is on the remote", i, code)
		}
		if code == http.StatusOK {
			landed++
		}
	}
	if landed == 0 {
		t.Fatal("no change landed")
	}
	t.Logf("%d of %d changes landed", landed, n)
}

// TestChangesRemoteConflict: when another writer moves the remote branch every time the
// change has been made on the mirror, before it is pushed, the push's compare-and-swap
// refuses it each time: after 3 attempts the answer is 409, and nothing of the change is on
// the remote (the other writer's commits are all there).
func TestChangesRemoteConflict(t *testing.T) {
	s := newRemoteChanges(t, authoring.ModePush)
	moves := 0
	s.rights.before = func() {
		moves++
		files := s.remote.Files(t, "main")
		files[fmt.Sprintf("other-%d.yaml", moves)] = configMap(fmt.Sprintf("other-%d", moves), "K", "v")
		s.remote.Commit(t, "main", files)
	}
	code, body := s.post(s.admin, "", addEdge)
	noSecrets(t, "the answer", body)
	if code != http.StatusConflict || !strings.Contains(string(body), "send it again") {
		t.Fatalf("a branch that keeps moving: %d %s", code, body)
	}
	files := s.remote.Files(t, "main")
	if _, ok := files["environments/dev/cluster-types/edge.yaml"]; ok {
		t.Error("the refused change is on the remote")
	}
	for i := 1; i <= moves; i++ {
		if _, ok := files[fmt.Sprintf("other-%d.yaml", i)]; !ok {
			t.Errorf("the other writer's commit %d is gone", i)
		}
	}
	if moves != 3 {
		t.Errorf("the change was made %d times, want 3", moves)
	}
	// Once the branch stands still, the same change lands.
	s.rights.before = nil
	if code, body := s.post(s.admin, "", addEdge); code != http.StatusOK {
		t.Errorf("the change again: %d %s", code, body)
	}
}

// TestProposalOfWhoMayNotMakeIt: someone the access policies do not let make a change may
// still propose it: a pull request the platform team reviews, authored by them, recorded as
// their proposal; the control plane's main does not move.
func TestProposalOfWhoMayNotMakeIt(t *testing.T) {
	s := newRemoteChanges(t, authoring.ModePush)
	s.rights.deny = "pat@contoso.com may not author the platform's objects"
	var req ChangesRequest
	if err := json.Unmarshal([]byte(addEdge), &req); err != nil {
		t.Fatal(err)
	}
	pat := access.Identity{Issuer: "https://idp.example.com", Subject: "u-pat", Name: "Pat", Email: "pat@contoso.com"}
	tip := s.remote.Tip(t, "main")
	if _, err := s.changes.Change(t.Context(), req.Operations, false, pat); !fleet.IsForbidden(err) {
		t.Fatalf("the change: %v, want refused", err)
	}
	if !s.changes.CanPropose() {
		t.Fatal("a control plane URL with a forge cannot take proposals")
	}
	plan, err := s.changes.Propose(t.Context(), req.Operations, true, pat)
	if err != nil || !plan.Valid || len(s.gh.Created()) != 0 {
		t.Fatalf("the proposal's dry run: %+v, %v", plan, err)
	}
	res, err := s.changes.Propose(t.Context(), req.Operations, false, pat)
	if err != nil || res.PullRequest == nil || len(res.Commits) != 1 {
		t.Fatalf("the proposal: %+v, %v", res, err)
	}
	if s.remote.Tip(t, "main") != tip {
		t.Error("a proposal moved main")
	}
	if c := s.commit(res.Commits[0].Commit); c.Author.Email != "pat@contoso.com" {
		t.Errorf("the proposal's commit is authored by %s <%s>", c.Author.Name, c.Author.Email)
	}
	events, err := s.hub.History(t.Context(), hub.HistoryFilter{Kind: hub.EventAuthoring})
	if err != nil || len(events) == 0 || !strings.HasPrefix(events[0].Message, "proposed: ") || events[0].Actor == nil || events[0].Actor.Email != "pat@contoso.com" {
		t.Fatalf("the proposal in the history: %+v, %v", events, err)
	}
}
