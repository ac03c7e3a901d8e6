package github_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/forge"
)

const listPath = "GET /repos/octocat/Hello-World/pulls"

// linkHeader writes GitHub's pagination header: /repositories/{id} URLs, one per relation.
func linkHeader(r *http.Request, rels map[string]int) string {
	var parts []string
	for _, rel := range []string{"prev", "next", "last", "first"} {
		if page, ok := rels[rel]; ok {
			parts = append(parts, fmt.Sprintf(`<http://%s/api/v3/repositories/1296269/pulls?state=open&base=main&per_page=100&page=%d>; rel=%q`, r.Host, page, rel))
		}
	}
	return strings.Join(parts, ", ")
}

func TestListOpenFollowsPages(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle(listPath, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		checkQuery(t, r, map[string]string{"state": "open", "base": "main", "per_page": "100", "page": page})
		switch page {
		case "1":
			serveFile(t, w, http.StatusOK, "pulls-list-page1.json", map[string]string{"Link": linkHeader(r, map[string]int{"next": 2, "last": 2})})
		case "2":
			serveFile(t, w, http.StatusOK, "pulls-list-page2.json", map[string]string{"Link": linkHeader(r, map[string]int{"prev": 1, "first": 1})})
		default:
			t.Errorf("unexpected page %q", page)
			http.NotFound(w, r)
		}
	})

	got, err := f.client().ListOpen(t.Context(), gitops, "main")
	if err != nil {
		t.Fatalf("ListOpen: %v", err)
	}
	devBody := "fleetform desired state for environment `dev`.\n\n" + forge.Marker("dev") + "\n"
	want := []forge.PullRequest{
		{Number: 1347, URL: "https://github.com/octocat/Hello-World/pull/1347", Head: "fleetform/dev/20260101-120000-6dcb09b", Base: "main",
			Title: "fleetform: dev", Body: devBody, Author: "fleetform-bot"},
		{Number: 1348, URL: "https://github.com/octocat/Hello-World/pull/1348", Head: "new-topic", Base: "main",
			Title: "Amazing new feature", Body: "Please pull these awesome changes in!", Author: "octocat"},
		{Number: 1349, URL: "https://github.com/octocat/Hello-World/pull/1349", Head: "fleetform/dev/copied", Base: "main",
			Title: "fleetform: dev (copied)", Body: devBody, Author: "hubot", CrossRepository: true},
		{Number: 1350, URL: "https://github.com/octocat/Hello-World/pull/1350", Head: "fleetform/prod/20260101-120000-6dcb09b", Base: "main",
			Title: "fleetform: prod", Body: "fleetform desired state for environment `prod`.\n\n" + forge.Marker("prod") + "\n", Author: "fleetform-bot"},
		{Number: 1352, URL: "https://github.com/octocat/Hello-World/pull/1352", Head: "fleetform/dev/orphan", Base: "main",
			Title: "fleetform: dev (from a deleted fork)", Body: devBody, Author: "hubot", CrossRepository: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListOpen (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		"GET /api/v3/repos/octocat/Hello-World/pulls?base=main&page=1&per_page=100&state=open",
		"GET /api/v3/repos/octocat/Hello-World/pulls?base=main&page=2&per_page=100&state=open",
	}
	if diff := cmp.Diff(wantCalls, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Only fleetform's own dev pull request is owned: not the human one, not the forks' copies, not prod's.
	var owned []int
	for _, pr := range got {
		if forge.Owned(pr, "dev") {
			owned = append(owned, pr.Number)
		}
	}
	if diff := cmp.Diff([]int{1347}, owned); diff != "" {
		t.Errorf("owned for dev (-want +got):\n%s", diff)
	}
}

func TestListOpenEmpty(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle(listPath, func(w http.ResponseWriter, r *http.Request) {
		checkQuery(t, r, map[string]string{"state": "open", "base": "release/v1", "per_page": "100", "page": "1"})
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "[]")
	})
	got, err := f.client().ListOpen(t.Context(), gitops, "release/v1")
	if err != nil || len(got) != 0 {
		t.Errorf("ListOpen = %v, %v; want no pull requests", got, err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestListOpenRefusesPagesGoingBack(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle(listPath, func(w http.ResponseWriter, r *http.Request) {
		serveFile(t, w, http.StatusOK, "pulls-list-page2.json", map[string]string{"Link": linkHeader(r, map[string]int{"next": 1})})
	})
	got, err := f.client().ListOpen(t.Context(), gitops, "main")
	if err == nil || !strings.Contains(err.Error(), "links back to page 1") {
		t.Errorf("ListOpen = %v, %v; want a pagination error", got, err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

// newChange is the pull request the create tests open; pulls-create-201.json answers it.
func newChange(labels ...string) forge.NewChangeRequest {
	return forge.NewChangeRequest{
		Base:   "main",
		Head:   "fleetform/dev/20260102-090000-e5bd391",
		Title:  "fleetform: dev",
		Body:   "fleetform desired state for environment `dev`.\n\n" + forge.Marker("dev") + "\n",
		Labels: labels,
	}
}

func handleCreate(t *testing.T, f *fakeGitHub, status int, payload string) {
	t.Helper()
	req := newChange()
	f.handle("POST /repos/octocat/Hello-World/pulls", func(w http.ResponseWriter, r *http.Request) {
		checkQuery(t, r, map[string]string{})
		checkJSONBody(t, r, map[string]any{
			"title": req.Title, "head": req.Head, "base": req.Base, "body": req.Body, "maintainer_can_modify": true,
		})
		serveFile(t, w, status, payload, nil)
	})
}

func TestCreateAddsLabels(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	handleCreate(t, f, http.StatusCreated, "pulls-create-201.json")
	f.handle("POST /repos/octocat/Hello-World/issues/1351/labels", func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, []any{"promoted", "fleetform"})
		serveFile(t, w, http.StatusOK, "issues-labels-200.json", nil)
	})

	got, err := f.client().Create(t.Context(), gitops, newChange("promoted", "fleetform"))
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	want := forge.PullRequest{
		Number: 1351, URL: "https://github.com/octocat/Hello-World/pull/1351",
		Head: "fleetform/dev/20260102-090000-e5bd391", Base: "main", Title: "fleetform: dev",
		Body: newChange().Body, Author: "fleetform-bot",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Create (-want +got):\n%s", diff)
	}
	if !forge.Owned(got, "dev") {
		t.Errorf("the created pull request is not Owned for dev: %+v", got)
	}
	wantCalls := []string{
		"POST /api/v3/repos/octocat/Hello-World/pulls",
		"POST /api/v3/repos/octocat/Hello-World/issues/1351/labels",
	}
	if diff := cmp.Diff(wantCalls, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCreateWithoutLabels(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	handleCreate(t, f, http.StatusCreated, "pulls-create-201.json")
	got, err := f.client().Create(t.Context(), gitops, newChange())
	if err != nil || got.Number != 1351 {
		t.Fatalf("Create = %+v, %v; want #1351", got, err)
	}
	if diff := cmp.Diff([]string{"POST /api/v3/repos/octocat/Hello-World/pulls"}, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCreateWhenOneAlreadyExists(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	handleCreate(t, f, http.StatusUnprocessableEntity, "pulls-create-422-exists.json")
	got, err := f.client().Create(t.Context(), gitops, newChange("promoted"))
	if !errors.Is(err, forge.ErrPullRequestExists) {
		t.Fatalf("Create error = %v, want forge.ErrPullRequestExists", err)
	}
	if got != (forge.PullRequest{}) {
		t.Errorf("Create returned %+v with the error, want the zero PullRequest", got)
	}
	for _, want := range []string{"create pull request fleetform/dev/20260102-090000-e5bd391 -> main in octocat/Hello-World", "422", "A pull request already exists for octocat:"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q misses %q", err, want)
		}
	}
	// No labels request: the catch-all handler would fail the test.
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCreateLabelsFail(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	handleCreate(t, f, http.StatusCreated, "pulls-create-201.json")
	f.handle("POST /repos/octocat/Hello-World/issues/1351/labels", func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusForbidden, "error-403-not-accessible.json", nil)
	})
	got, err := f.client().Create(t.Context(), gitops, newChange("promoted"))
	if err == nil || !strings.Contains(err.Error(), "Resource not accessible") || !strings.Contains(err.Error(), "#1351") {
		t.Errorf("Create error = %v, want the labels failure naming #1351", err)
	}
	if got.Number != 1351 || got.URL == "" {
		t.Errorf("Create returned %+v with the labels error, want the opened #1351", got)
	}
}

func TestCloseComments(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	comment := forge.SupersededComment("dev", 1351)
	f.handle("POST /repos/octocat/Hello-World/issues/1347/comments", func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, map[string]any{"body": comment})
		serveFile(t, w, http.StatusCreated, "issues-comment-201.json", nil)
	})
	f.handle("PATCH /repos/octocat/Hello-World/pulls/1347", func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, map[string]any{"state": "closed"})
		serveFile(t, w, http.StatusOK, "pulls-update-closed-200.json", nil)
	})
	if err := f.client().Close(t.Context(), gitops, 1347, comment); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantCalls := []string{
		"POST /api/v3/repos/octocat/Hello-World/issues/1347/comments",
		"PATCH /api/v3/repos/octocat/Hello-World/pulls/1347",
	}
	if diff := cmp.Diff(wantCalls, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCloseWithoutComment(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("PATCH /repos/octocat/Hello-World/pulls/1347", func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, map[string]any{"state": "closed"})
		serveFile(t, w, http.StatusOK, "pulls-update-closed-200.json", nil)
	})
	if err := f.client().Close(t.Context(), gitops, 1347, ""); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if diff := cmp.Diff([]string{"PATCH /api/v3/repos/octocat/Hello-World/pulls/1347"}, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestCloseCommentFailsKeepsItOpen(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /repos/octocat/Hello-World/issues/1347/comments", func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusForbidden, "error-403-not-accessible.json", nil)
	})
	// No PATCH handler: closing after a failed comment would fail the test.
	err := f.client().Close(t.Context(), gitops, 1347, "why")
	if err == nil || !strings.Contains(err.Error(), "comment on pull request #1347") {
		t.Errorf("Close error = %v, want the comment failure", err)
	}
}

func TestDeleteBranch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		branch      string
		wantPath    string // decoded, after /api/v3
		wantEscaped string
	}{
		{"fleetform/dev/20260101-120000-6dcb09b", "/repos/octocat/Hello-World/git/refs/heads/fleetform/dev/20260101-120000-6dcb09b",
			"/api/v3/repos/octocat/Hello-World/git/refs/heads/fleetform/dev/20260101-120000-6dcb09b"},
		{"refs/heads/fleetform/prod/x", "/repos/octocat/Hello-World/git/refs/heads/fleetform/prod/x",
			"/api/v3/repos/octocat/Hello-World/git/refs/heads/fleetform/prod/x"},
		{"fleetform/dev/fix#12 ü", "/repos/octocat/Hello-World/git/refs/heads/fleetform/dev/fix#12 ü",
			"/api/v3/repos/octocat/Hello-World/git/refs/heads/fleetform/dev/fix%2312%20%C3%BC"},
	}
	for _, tt := range tests {
		t.Run(tt.branch, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			f.handle("DELETE /repos/octocat/Hello-World/git/refs/{ref...}", func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != tt.wantPath {
					t.Errorf("path = %q, want %q", r.URL.Path, tt.wantPath)
				}
				checkQuery(t, r, map[string]string{})
				serveFile(t, w, http.StatusNoContent, "", nil)
			})
			if err := f.client().DeleteBranch(t.Context(), gitops, tt.branch); err != nil {
				t.Fatalf("DeleteBranch: %v", err)
			}
			if diff := cmp.Diff([]string{"DELETE " + tt.wantEscaped}, f.requests()); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDeleteBranchAlreadyGone(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("DELETE /repos/octocat/Hello-World/git/refs/heads/fleetform/dev/gone", func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusUnprocessableEntity, "git-refs-delete-422-missing.json", nil)
	})
	if err := f.client().DeleteBranch(t.Context(), gitops, "fleetform/dev/gone"); err != nil {
		t.Errorf("DeleteBranch of a missing branch: %v, want nil", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestDeleteBranchFails(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("DELETE /repos/octocat/Hello-World/git/refs/heads/fleetform/dev/x", func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusForbidden, "error-403-not-accessible.json", nil)
	})
	err := f.client().DeleteBranch(t.Context(), gitops, "fleetform/dev/x")
	if err == nil || !strings.Contains(err.Error(), `delete branch "fleetform/dev/x" in octocat/Hello-World`) {
		t.Errorf("DeleteBranch error = %v, want one naming the branch", err)
	}
}

func TestDeleteBranchEmpty(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	for _, branch := range []string{"", "refs/heads/"} {
		if err := f.client().DeleteBranch(t.Context(), gitops, branch); err == nil {
			t.Errorf("DeleteBranch(%q): want an error", branch)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
