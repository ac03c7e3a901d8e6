package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/hub"
)

// testSources: serve's git sources are stored by URL and branch, replaced by a later put,
// listed sorted, kept across a restart, and refused when invalid or carrying credentials.
func (s suite) testSources(t *testing.T) {
	store, reopen := s.open(t)
	c := newClock()
	e := start(t, store, c)
	ctx := context.Background()
	if got, err := e.hub.Sources(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("sources of an empty store: %#v, %v; want an empty list", got, err)
	}
	at := c.Now()
	cp := hub.SourceState{URL: "https://example.com/org/control-plane", Branch: "main", Kind: hub.SourceKindControlPlane,
		LastCommit: "c0ffee", LastPoll: at, LastSync: at.Add(-time.Minute), NextPoll: at.Add(time.Minute)}
	head := hub.SourceState{URL: "https://example.com/org/shop", Kind: hub.SourceKindWorkload, LastPoll: at,
		LastError: "git fetch: connection refused", Failures: 3, NextPoll: at.Add(8 * time.Minute)}
	dev := hub.SourceState{URL: "https://example.com/org/shop", Branch: "dev", Kind: hub.SourceKindWorkload, LastCommit: "d00d"}
	base := hub.SourceState{URL: "git@example.com:org/base.git", Branch: "main", Kind: hub.SourceKindBase}
	for _, src := range []hub.SourceState{dev, cp, base, head} {
		if err := e.hub.PutSource(ctx, src); err != nil {
			t.Fatalf("put %s@%s: %v", src.URL, src.Branch, err)
		}
	}
	head.LastError, head.Failures, head.LastCommit = "", 0, "beef" // the next poll succeeded
	if err := e.hub.PutSource(ctx, head); err != nil {
		t.Fatal(err)
	}
	want := []hub.SourceState{base, cp, head, dev} // by URL, then branch ("" first)
	checkSources(t, e.hub, want)
	e.stop()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	restarted := hub.New(reopen(), hub.Options{SweepEvery: -1})
	checkSources(t, restarted, want)
	checkInvalidSources(t, restarted)
	checkSources(t, restarted, want)
	// A source forgotten: that branch of the repository only; forgetting it again is no error.
	for range 2 {
		if err := restarted.ForgetSource(ctx, dev.URL, dev.Branch); err != nil {
			t.Fatal(err)
		}
	}
	checkSources(t, restarted, []hub.SourceState{base, cp, head})
}

func checkSources(t *testing.T, h *hub.Hub, want []hub.SourceState) {
	t.Helper()
	got, err := h.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
}

func checkInvalidSources(t *testing.T, h *hub.Hub) {
	t.Helper()
	ok := hub.SourceState{URL: "https://example.com/org/new", Kind: hub.SourceKindWorkload}
	for name, change := range map[string]func(*hub.SourceState){
		"no URL":            func(s *hub.SourceState) { s.URL = "" },
		"long URL":          func(s *hub.SourceState) { s.URL += strings.Repeat("x", hub.MaxURLLength) },
		"user and password": func(s *hub.SourceState) { s.URL = "https://user:secret@example.com/org/new" },
		"token as user":     func(s *hub.SourceState) { s.URL = "https://ghp_secret@example.com/org/new" },
		"ssh password":      func(s *hub.SourceState) { s.URL = "ssh://git:secret@example.com/org/new" },
		"unknown kind":      func(s *hub.SourceState) { s.Kind = "library" },
		"no kind":           func(s *hub.SourceState) { s.Kind = "" },
		"long branch":       func(s *hub.SourceState) { s.Branch = strings.Repeat("b", hub.MaxRefLength+1) },
		"long commit":       func(s *hub.SourceState) { s.LastCommit = strings.Repeat("c", hub.MaxRefLength+1) },
		"long error":        func(s *hub.SourceState) { s.LastError = strings.Repeat("e", hub.MaxErrorLength+1) },
		"negative failures": func(s *hub.SourceState) { s.Failures = -1 },
	} {
		src := ok
		change(&src)
		if err := h.PutSource(context.Background(), src); code(err) != hub.CodeInvalid {
			t.Errorf("%s: put answered %v, want %s", name, err, hub.CodeInvalid)
		}
	}
}

// testSyncs: the sync recorded last is an environment's latest (whatever its time), records
// round-trip, each environment keeps its latest MaxSyncHistory, and invalid records are
// refused without being stored.
func (s suite) testSyncs(t *testing.T) {
	store, reopen := s.open(t)
	c := newClock()
	e := start(t, store, c)
	ctx := context.Background()
	_, err := e.hub.LatestSync(ctx, "dev")
	if code(err) != hub.CodeNotFound || !errors.Is(err, hub.ErrNotFound) {
		t.Fatalf("latest sync of an environment without any: %v; want not found", err)
	}
	first := hub.SyncRecord{Environment: "dev", Time: c.Now(), DurationMS: 1234, ControlPlaneCommit: "c1", CommonCommit: "c0",
		GitOpsRepo: "https://example.com/org/gitops", Branch: "dev", GitOpsCommit: "g1", FilesChanged: 7, Trigger: hub.TriggerPoll,
		Failed: []hub.FailedAssignment{{ClusterType: "edge", DeploymentTarget: "shop-dev", Error: "template: missing key"}}}
	recordSync(t, e.hub, first)
	checkLatestSync(t, e.hub, first)
	c.Advance(time.Minute)
	// No time: the hub's clock; no failures: an empty list.
	second := hub.SyncRecord{Environment: "dev", NoChange: true, PullRequest: "https://example.com/org/gitops/pull/4", Trigger: hub.TriggerWebhook}
	recordSync(t, e.hub, second)
	second.Time, second.Failed = c.Now(), []hub.FailedAssignment{}
	checkLatestSync(t, e.hub, second)
	// Recorded last, the third is the latest, although its time is the earliest.
	third := hub.SyncRecord{Environment: "dev", Time: first.Time.Add(-time.Hour), Error: "push: non-fast-forward", Trigger: hub.TriggerStart,
		Failed: []hub.FailedAssignment{}}
	recordSync(t, e.hub, third)
	checkLatestSync(t, e.hub, third)
	checkSyncHistory(t, e.hub, "dev", []hub.SyncRecord{third, second, first})
	e.stop()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	restarted := hub.New(reopen(), hub.Options{SweepEvery: -1, Now: c.Now})
	checkLatestSync(t, restarted, third)
	checkInvalidSyncs(t, restarted)
	checkLatestSync(t, restarted, third)
}

// testSyncHistoryBound: recording more than MaxSyncHistory syncs of an environment keeps its
// latest MaxSyncHistory, and leaves the other environments' alone.
func (s suite) testSyncHistoryBound(t *testing.T) {
	store, _ := s.open(t)
	c := newClock()
	e := start(t, store, c)
	other := hub.SyncRecord{Environment: "prod", Time: c.Now(), Trigger: hub.TriggerPromotion, Failed: []hub.FailedAssignment{}}
	recordSync(t, e.hub, other)
	var want []hub.SyncRecord
	for i := range hub.MaxSyncHistory + 5 {
		r := hub.SyncRecord{Environment: "dev", Time: c.Now(), DurationMS: int64(i), Failed: []hub.FailedAssignment{}}
		recordSync(t, e.hub, r)
		want = append([]hub.SyncRecord{r}, want...)
	}
	checkSyncHistory(t, e.hub, "dev", want[:hub.MaxSyncHistory])
	checkSyncHistory(t, e.hub, "prod", []hub.SyncRecord{other})
	err := store.View(context.Background(), func(r hub.Reader) error {
		stored, err := r.Syncs(context.Background(), "dev", 2*hub.MaxSyncHistory)
		if err == nil && len(stored) != hub.MaxSyncHistory {
			t.Errorf("the store keeps %d syncs of dev, want %d", len(stored), hub.MaxSyncHistory)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func recordSync(t *testing.T, h *hub.Hub, r hub.SyncRecord) {
	t.Helper()
	if err := h.RecordSync(context.Background(), r); err != nil {
		t.Fatalf("record a sync of %s: %v", r.Environment, err)
	}
}

func checkLatestSync(t *testing.T, h *hub.Hub, want hub.SyncRecord) {
	t.Helper()
	got, err := h.LatestSync(context.Background(), want.Environment)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("latest sync of %s (-want +got):\n%s", want.Environment, diff)
	}
}

func checkSyncHistory(t *testing.T, h *hub.Hub, env string, want []hub.SyncRecord) {
	t.Helper()
	got, err := h.SyncHistory(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sync history of %s (-want +got):\n%s", env, diff)
	}
}

func checkInvalidSyncs(t *testing.T, h *hub.Hub) {
	t.Helper()
	ok := hub.SyncRecord{Environment: "dev", Failed: []hub.FailedAssignment{{ClusterType: "edge", DeploymentTarget: "shop-dev"}}}
	tooMany := make([]hub.FailedAssignment, hub.MaxFailedAssignments+1)
	for i := range tooMany {
		tooMany[i] = hub.FailedAssignment{ClusterType: "edge", DeploymentTarget: "t"}
	}
	for name, change := range map[string]func(*hub.SyncRecord){
		"no environment":        func(r *hub.SyncRecord) { r.Environment = "" },
		"bad environment":       func(r *hub.SyncRecord) { r.Environment = "Dev Env" },
		"negative duration":     func(r *hub.SyncRecord) { r.DurationMS = -1 },
		"negative files":        func(r *hub.SyncRecord) { r.FilesChanged = -1 },
		"unknown trigger":       func(r *hub.SyncRecord) { r.Trigger = "cron" },
		"long commit":           func(r *hub.SyncRecord) { r.GitOpsCommit = strings.Repeat("c", hub.MaxRefLength+1) },
		"long error":            func(r *hub.SyncRecord) { r.Error = strings.Repeat("e", hub.MaxErrorLength+1) },
		"repo with credentials": func(r *hub.SyncRecord) { r.GitOpsRepo = "https://x-access-token:secret@example.com/org/gitops" },
		"long pull request": func(r *hub.SyncRecord) {
			r.PullRequest = "https://example.com/" + strings.Repeat("p", hub.MaxURLLength)
		},
		"failed without target":  func(r *hub.SyncRecord) { r.Failed[0].DeploymentTarget = "" },
		"failed with long error": func(r *hub.SyncRecord) { r.Failed[0].Error = strings.Repeat("e", hub.MaxMessageLength+1) },
		"too many failed":        func(r *hub.SyncRecord) { r.Failed = tooMany },
	} {
		r := ok
		r.Failed = []hub.FailedAssignment{ok.Failed[0]}
		change(&r)
		if err := h.RecordSync(context.Background(), r); code(err) != hub.CodeInvalid {
			t.Errorf("%s: record answered %v, want %s", name, err, hub.CodeInvalid)
		}
	}
}
