package github_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/forge"
)

const statusCommit = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

func TestSetStatus(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /repos/octocat/Hello-World/statuses/"+statusCommit, func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, map[string]any{"state": "success", "context": "stage environment",
			"description": "promoted 6dcb09b to stage", "target_url": "https://hub.example.com/environments/stage"})
		serveFile(t, w, http.StatusCreated, "statuses-create-201.json", nil)
	})
	err := f.client().SetStatus(t.Context(), gitops, statusCommit, forge.CommitStatus{State: forge.StatusSuccess,
		Context: forge.EnvironmentContext("stage"), Description: "promoted 6dcb09b to stage", TargetURL: "https://hub.example.com/environments/stage"})
	if err != nil {
		t.Fatalf("SetStatus: %v", err)
	}
	if diff := cmp.Diff([]string{"POST /api/v3/repos/octocat/Hello-World/statuses/" + statusCommit}, f.requests()); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestSetStatusShortensTheDescription(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	long := strings.Repeat("dev: 3 of 4 clusters compliant; ", 10)
	f.handle("POST /repos/octocat/Hello-World/statuses/"+statusCommit, func(w http.ResponseWriter, r *http.Request) {
		checkJSONBody(t, r, map[string]any{"state": "failure", "context": "prod environment",
			"description": string([]rune(long)[:139]) + "…"})
		serveFile(t, w, http.StatusCreated, "statuses-create-201.json", nil)
	})
	err := f.client().SetStatus(t.Context(), gitops, statusCommit, forge.CommitStatus{State: forge.StatusFailure,
		Context: forge.EnvironmentContext("prod"), Description: long})
	if err != nil {
		t.Fatalf("SetStatus: %v", err)
	}
}

func TestSetStatusUnauthorized(t *testing.T) {
	t.Parallel()
	f := newFake(t)
	f.handle("POST /repos/octocat/Hello-World/statuses/"+statusCommit, func(w http.ResponseWriter, _ *http.Request) {
		serveFile(t, w, http.StatusUnauthorized, "error-401.json", nil)
	})
	err := f.client().SetStatus(t.Context(), gitops, statusCommit, forge.CommitStatus{State: forge.StatusSuccess, Context: "dev environment"})
	if !errors.Is(err, forge.ErrUnauthorized) || !strings.Contains(err.Error(), "dev environment") || strings.Contains(err.Error(), token) {
		t.Fatalf("SetStatus with a bad token: %v", err)
	}
	if err := f.client().SetStatus(t.Context(), gitops, "", forge.CommitStatus{Context: "dev environment"}); err == nil {
		t.Fatal("a status without a commit was accepted")
	}
}
