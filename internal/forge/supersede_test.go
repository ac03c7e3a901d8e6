package forge_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/testutil/forgetest"
)

var gitops = forge.Repo{Owner: "contoso", Name: "gitops"}

// owned returns one of fleetform's own pull requests for env into base.
func owned(number int, env, base, suffix string) forge.PullRequest {
	return forge.PullRequest{
		Number: number, Head: forge.BranchPrefix(env) + suffix, Base: base, Author: "fleetform-bot",
		Title: "fleetform: " + env, Body: "Desired state of " + env + ".\n\n" + forge.Marker(env) + "\n",
	}
}

// recorder is a forgetest.PullRequests that serves open and records what is closed and deleted.
type recorder struct {
	forgetest.PullRequests
	closed   []int
	comments []string
	deleted  []string
}

func newRecorder(t *testing.T, base string, open []forge.PullRequest) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.ListOpenFunc = func(_ context.Context, r forge.Repo, gotBase string) ([]forge.PullRequest, error) {
		if r != gitops || gotBase != base {
			t.Errorf("ListOpen(%v, %q), want (%v, %q)", r, gotBase, gitops, base)
		}
		return open, nil
	}
	rec.CloseFunc = func(_ context.Context, r forge.Repo, number int, comment string) error {
		if r != gitops {
			t.Errorf("Close in %v, want %v", r, gitops)
		}
		rec.closed = append(rec.closed, number)
		rec.comments = append(rec.comments, comment)
		return nil
	}
	rec.DeleteBranchFunc = func(_ context.Context, r forge.Repo, branch string) error {
		if r != gitops {
			t.Errorf("DeleteBranch in %v, want %v", r, gitops)
		}
		rec.deleted = append(rec.deleted, branch)
		return nil
	}
	return rec
}

func TestSupersede(t *testing.T) {
	t.Parallel()
	human := forge.PullRequest{Number: 3, Head: "fleetform/dev/hotfix", Base: "main", Author: "alice", Body: "Manual fix, please keep."}
	kalypso := forge.PullRequest{Number: 4, Head: "deployment/2026-01-01-00-00-00", Base: "main", Author: "kalypso", Body: forge.Marker("dev")}
	fork := owned(5, "dev", "main", "from-a-fork")
	fork.CrossRepository = true
	open := []forge.PullRequest{
		owned(12, "dev", "main", "20260102-bbb"),
		human,
		kalypso,
		fork,
		owned(7, "prod", "main", "20260101-ppp"),
		owned(20, "dev", "main", "20260103-new"), // the new one
		owned(9, "dev", "main", "20260101-aaa"),
		owned(8, "dev", "release", "20260101-rel"), // another base: a wrong ListOpen must not matter
	}
	rec := newRecorder(t, "main", open)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	got, err := forge.Supersede(t.Context(), rec, gitops, "main", "dev", 20, logger)
	if err != nil {
		t.Fatalf("Supersede: %v", err)
	}
	if diff := cmp.Diff([]int{9, 12}, got); diff != "" {
		t.Errorf("closed numbers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{12, 9}, rec.closed); diff != "" {
		t.Errorf("Close calls (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"fleetform/dev/20260102-bbb", "fleetform/dev/20260101-aaa"}, rec.deleted); diff != "" {
		t.Errorf("DeleteBranch calls (-want +got):\n%s", diff)
	}
	for _, c := range rec.comments {
		if !strings.Contains(c, "#20") || c != forge.SupersededComment("dev", 20) {
			t.Errorf("comment %q does not name the new pull request #20", c)
		}
	}
	for _, want := range []string{"number=12", "number=9", "superseded_by=20", "branch=fleetform/dev/20260101-aaa"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log misses %q:\n%s", want, logs.String())
		}
	}
}

func TestSupersedeNothingToDo(t *testing.T) {
	t.Parallel()
	open := []forge.PullRequest{
		owned(20, "dev", "main", "new"),
		{Number: 3, Head: "feature/x", Base: "main", Author: "alice"},
	}
	// CloseFunc and DeleteBranchFunc stay nil: any call would be an error.
	fake := &forgetest.PullRequests{ListOpenFunc: func(context.Context, forge.Repo, string) ([]forge.PullRequest, error) {
		return open, nil
	}}
	got, err := forge.Supersede(t.Context(), fake, gitops, "main", "dev", 20, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Supersede = %v, %v; want nothing closed and no error", got, err)
	}
}

func TestSupersedeGoesOnAfterFailures(t *testing.T) {
	t.Parallel()
	open := []forge.PullRequest{
		owned(1, "dev", "main", "a"),
		owned(2, "dev", "main", "b"),
		owned(3, "dev", "main", "c"),
	}
	rec := newRecorder(t, "main", open)
	errClose := errors.New("close refused")
	errDelete := errors.New("delete refused")
	rec.CloseFunc = func(_ context.Context, _ forge.Repo, number int, _ string) error {
		if number == 1 {
			return errClose
		}
		rec.closed = append(rec.closed, number)
		return nil
	}
	rec.DeleteBranchFunc = func(_ context.Context, _ forge.Repo, branch string) error {
		if branch == "fleetform/dev/b" {
			return errDelete
		}
		rec.deleted = append(rec.deleted, branch)
		return nil
	}

	got, err := forge.Supersede(t.Context(), rec, gitops, "main", "dev", 4, nil)
	if !errors.Is(err, errClose) || !errors.Is(err, errDelete) {
		t.Errorf("error = %v; want both failures joined", err)
	}
	if err != nil && (!strings.Contains(err.Error(), "#1") || !strings.Contains(err.Error(), "fleetform/dev/b")) {
		t.Errorf("error %q does not name the pull request and the branch", err)
	}
	if diff := cmp.Diff([]int{2, 3}, got); diff != "" {
		t.Errorf("closed numbers (-want +got):\n%s", diff)
	}
	// The branch of #1 is not deleted: it was not closed.
	if diff := cmp.Diff([]string{"fleetform/dev/c"}, rec.deleted); diff != "" {
		t.Errorf("deleted branches (-want +got):\n%s", diff)
	}
}

func TestSupersedeListError(t *testing.T) {
	t.Parallel()
	errList := errors.New("list refused")
	fake := &forgetest.PullRequests{ListOpenFunc: func(context.Context, forge.Repo, string) ([]forge.PullRequest, error) {
		return nil, errList
	}}
	got, err := forge.Supersede(t.Context(), fake, gitops, "main", "dev", 20, nil)
	if !errors.Is(err, errList) || got != nil {
		t.Errorf("Supersede = %v, %v; want nil and the list error", got, err)
	}
}

func TestSupersedeInvalidKeep(t *testing.T) {
	t.Parallel()
	// ListOpenFunc stays nil: Supersede must refuse before asking the forge.
	got, err := forge.Supersede(t.Context(), &forgetest.PullRequests{}, gitops, "main", "dev", 0, nil)
	if err == nil || got != nil || strings.Contains(err.Error(), "forgetest") {
		t.Errorf("Supersede(keep=0) = %v, %v; want an invalid-number error before any call", got, err)
	}
}

func TestFakeReportsUnsetFuncs(t *testing.T) {
	t.Parallel()
	var fake forgetest.PullRequests
	ctx := t.Context()
	_, errList := fake.ListOpen(ctx, gitops, "main")
	_, errCreate := fake.Create(ctx, gitops, forge.NewChangeRequest{})
	errClose := fake.Close(ctx, gitops, 1, "")
	errDelete := fake.DeleteBranch(ctx, gitops, "b")
	for name, err := range map[string]error{"ListOpen": errList, "Create": errCreate, "Close": errClose, "DeleteBranch": errDelete} {
		if err == nil || !strings.Contains(err.Error(), name+"Func is nil") {
			t.Errorf("%s on an empty fake: error %v, want one naming %sFunc", name, err, name)
		}
	}
}
