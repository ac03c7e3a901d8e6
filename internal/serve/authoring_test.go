package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// changesServer is serve's handler, with the authoring API, over the fixture's bare control
// plane and its hub (SQLite), with an admin token named ci-bot and a read-only one.
type changesServer struct {
	*fixture
	url, admin, reader string
	changes            *ControlPlaneChanges
}

func newChangesServer(t *testing.T) *changesServer {
	t.Helper()
	f := newFixture(t)
	s := &changesServer{fixture: f}
	var err error
	if _, s.admin, err = f.hub.CreateToken(t.Context(), hub.TokenAdmin, "ci-bot", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, s.reader, err = f.hub.CreateToken(t.Context(), hub.TokenRead, "viewer", time.Time{}); err != nil {
		t.Fatal(err)
	}
	s.changes = NewControlPlaneChanges(ChangesOptions{Fleet: f.svc.opts.Fleet, Hub: f.hub,
		Applied: func() { f.svc.Trigger(f.cp.Dir) }})
	srv := httptest.NewServer(Handler(api.New(f.hub, api.Options{}), f.hub, f.svc, NewWebhooks("", f.svc, nil), s.changes.Handler()))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// post sends a change and returns the status and the body.
func (s *changesServer) post(token, query, body string) (int, []byte) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(s.t.Context(), http.MethodPost, s.url+"/api/v1/controlplane/changes"+query, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp.StatusCode, data
}

func (s *changesServer) result(data []byte) *authoring.Result {
	s.t.Helper()
	var res authoring.Result
	if err := json.Unmarshal(data, &res); err != nil {
		s.t.Fatalf("%v\n%s", err, data)
	}
	return &res
}

// repoBytes is every file of the bare control plane (objects, refs, packs).
func (s *changesServer) repoBytes() map[string]string { return gittest.ReadDir(s.t, s.cp.Dir) }

const addEdge = `{"operations":[{"op":"add","kind":"ClusterType","name":"edge","env":"dev","labels":{"region":"west"}}]}`

// TestChangesAPI: a dry run validates and plans and writes nothing; a change is committed
// on the control plane's branch, recorded in the hub's history with the token's name, and
// wakes the service; a read-only token or none is refused; an invalid change is 422 with
// its located errors and leaves the repository byte for byte as it was.
func TestChangesAPI(t *testing.T) {
	s := newChangesServer(t)
	tip := s.cp.Tip(t, "main")
	before := s.repoBytes()

	// Who may change: the admin token only.
	if code, body := s.post("", "", addEdge); code != http.StatusUnauthorized {
		t.Errorf("no token: %d %s", code, body)
	}
	if code, body := s.post(s.reader, "", addEdge); code != http.StatusForbidden || !strings.Contains(string(body), "admin token") {
		t.Errorf("read-only token: %d %s", code, body)
	}
	for _, bad := range []string{`{"operations":[]}`, `{"ops":[]}`, `[`, addEdge + addEdge} {
		if code, body := s.post(s.admin, "", bad); code != http.StatusBadRequest {
			t.Errorf("body %s: %d %s", bad, code, body)
		}
	}
	if code, body := s.post(s.admin, "?dryRun=maybe", addEdge); code != http.StatusBadRequest {
		t.Errorf("dryRun=maybe: %d %s", code, body)
	}

	// A dry run: valid, planned (the policy "all" puts shop's target on the new cluster
	// type), nothing written.
	code, body := s.post(s.admin, "?dryRun=true", addEdge)
	if code != http.StatusOK {
		t.Fatalf("dry run: %d %s", code, body)
	}
	res := s.result(body)
	if !res.Valid || res.Written || len(res.Commits) != 0 || len(res.Files) != 1 || res.Files[0].Path != "environments/dev/cluster-types/edge.yaml" {
		t.Fatalf("dry run %+v", res)
	}
	if p := planOf(res, "dev"); len(p.AssignmentsAdded) != 1 || p.AssignmentsAdded[0].DeploymentTarget != "shop-web" || p.AssignmentsAdded[0].ClusterType != "edge" {
		t.Errorf("dev's plan %+v", p)
	}
	if !equalBytes(before, s.repoBytes()) {
		t.Error("a dry run wrote into the repository")
	}
	if len(s.svc.wake) != 0 {
		t.Error("a dry run woke the service")
	}

	// An invalid change: 422, located errors, the repository as it was.
	code, body = s.post(s.admin, "", `{"operations":[{"op":"add","kind":"ClusterType","name":"broken","env":"dev","spec":{"reconciler":"builtin/nope"}}]}`)
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("invalid change: %d %s", code, body)
	}
	if res := s.result(body); res.Valid || res.Written || len(res.Errors) == 0 ||
		res.Errors[0].File != "environments/dev/cluster-types/broken.yaml" || !strings.Contains(res.Errors[0].Message, `"builtin/nope" not found`) {
		t.Errorf("invalid change answered %s", body)
	}
	code, body = s.post(s.admin, "", `{"operations":[{"op":"add","kind":"ClusterType","name":"Not_DNS","env":"dev"}]}`)
	if code != http.StatusUnprocessableEntity || !strings.Contains(string(body), `"valid":false`) || !strings.Contains(string(body), "Not_DNS") {
		t.Errorf("a name that is not DNS-1123: %d %s", code, body)
	}
	if !equalBytes(before, s.repoBytes()) {
		t.Error("a refused change wrote into the repository")
	}

	// The change: one commit on main, in the history with the token's name.
	code, body = s.post(s.admin, "", addEdge)
	if code != http.StatusOK {
		t.Fatalf("change: %d %s", code, body)
	}
	res = s.result(body)
	if !res.Valid || !res.Written || len(res.Commits) != 1 || res.Commits[0].Branch != "main" {
		t.Fatalf("change %+v", res)
	}
	now := s.cp.Tip(t, "main")
	if now.String() != res.Commits[0].Commit || now == tip {
		t.Fatalf("main is at %s, the change says %s", now, res.Commits[0].Commit)
	}
	files := s.cp.Files(t, "main")
	if !strings.Contains(files["environments/dev/cluster-types/edge.yaml"], "region: west") {
		t.Errorf("the committed cluster type:\n%s", files["environments/dev/cluster-types/edge.yaml"])
	}
	msg := commitMessage(t, s.cp, now.String())
	if !strings.HasPrefix(msg, "fleetform: add ClusterType edge in dev\n") || !strings.Contains(msg, "Changed-By: ci-bot") {
		t.Errorf("commit message %q", msg)
	}
	events, err := s.hub.History(t.Context(), hub.HistoryFilter{Kind: hub.EventAuthoring})
	// Newest first: the change, then the read-only token's refused attempt.
	if err != nil || len(events) != 2 || events[0].Revision != now.String() || events[0].Environment != "dev" ||
		events[0].Message != "add ClusterType edge in dev (by ci-bot)" || !strings.HasPrefix(events[1].Message, "refused: add ClusterType edge: token viewer may not author") {
		t.Errorf("history %+v %v", events, err)
	}
	if len(s.svc.wake) != 1 {
		t.Error("the change did not wake the service")
	}
	// The same change again is a duplicate: refused.
	if code, body := s.post(s.admin, "", addEdge); code != http.StatusUnprocessableEntity || !strings.Contains(string(body), "already exists") {
		t.Errorf("the same change twice: %d %s", code, body)
	}
}

func planOf(res *authoring.Result, env string) authoring.EnvironmentPlan {
	for _, p := range res.Plan {
		if p.Environment == env {
			return p
		}
	}
	return authoring.EnvironmentPlan{}
}

func equalBytes(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func commitMessage(t *testing.T, r *gittest.Repo, commit string) string {
	t.Helper()
	g, err := git.PlainOpen(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.CommitObject(plumbing.NewHash(commit))
	if err != nil {
		t.Fatal(err)
	}
	return c.Message
}

// TestChangesConcurrent: changes of the same file sent at the same time, through the API
// and by another writer (the CLI's authoring.Apply, with its own compare-and-swap), never
// lose one another: every change that succeeded is in the file at the end, and one that did
// not was answered 409 (nothing written).
func TestChangesConcurrent(t *testing.T) {
	s := newChangesServer(t)
	const n = 8
	var wg sync.WaitGroup
	landed := make([]bool, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("KEY_%d", i)
			op := authoring.Operation{Op: authoring.OpSet, Kind: "ConfigMap", Env: "dev", Data: map[string]any{key: "v"},
				Scope: &authoring.ConfigScope{EnvironmentWide: true}}
			if i%2 == 0 {
				body, _ := json.Marshal(ChangesRequest{Operations: []authoring.Operation{op}})
				code, answer := s.post(s.admin, "", string(body))
				switch code {
				case http.StatusOK:
					landed[i] = true
				case http.StatusConflict:
					if !bytes.Contains(answer, []byte("send it again")) {
						t.Errorf("409 without saying what to do: %s", answer)
					}
				default:
					t.Errorf("%s: %d %s", key, code, answer)
				}
				return
			}
			_, err := authoring.Apply(t.Context(), authoring.Request{ControlPlane: s.cp.Dir, Operations: []authoring.Operation{op},
				Mode: authoring.ModeCommit, Platform: controlplane.Options{RepoMap: controlplane.RepoMap{s.appsURL: s.apps.Dir}}})
			switch {
			case err == nil:
				landed[i] = true
			case !errors.Is(err, authoring.ErrConflict):
				t.Errorf("%s: %v", key, err)
			}
		}()
	}
	wg.Wait()
	config := s.cp.Files(t, "main")["environments/dev/config.yaml"]
	count := 0
	for i, ok := range landed {
		key := fmt.Sprintf("KEY_%d", i)
		if ok {
			count++
			if !strings.Contains(config, key+":") {
				t.Errorf("%s was committed but is not in the file: a lost write\n%s", key, config)
			}
		} else if strings.Contains(config, key+":") {
			t.Errorf("%s was refused but is in the file", key)
		}
	}
	if count == 0 {
		t.Fatal("no change landed")
	}
	t.Logf("%d of %d changes landed", count, n)
	events, err := s.hub.History(t.Context(), hub.HistoryFilter{Kind: hub.EventAuthoring})
	apiLanded := 0
	for i := 0; i < n; i += 2 {
		if landed[i] {
			apiLanded++
		}
	}
	if err != nil || len(events) != apiLanded {
		t.Errorf("history has %d changes, the API made %d (%v)", len(events), apiLanded, err)
	}
}
