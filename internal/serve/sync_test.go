package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/sqlite"
)

// TestFailedSyncIsRetried: a sync that fails after the poll saw the change (here the GitOps
// repository is unreachable) is tried again without anything moving, one interval later,
// then twice as long after each failure; the first success ends the retries.
func TestFailedSyncIsRetried(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.svc.round(ctx, map[string]bool{})
	f.round() // the first round's sources are polled once: what there is
	before := f.tips()

	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "debug")})
	away := f.gitops.Dir + ".away"
	if err := os.Rename(f.gitops.Dir, away); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Rename(away, f.gitops.Dir) }) // back for the checks, if the test stops early
	f.round()
	first := f.latest("dev")
	if first.Error == "" || first.Trigger != hub.TriggerPoll {
		t.Fatalf("dev's sync with its GitOps repository away: %+v, want a failure", first)
	}
	f.round() // one interval later, nothing moved: tried again, and fails again
	second := f.latest("dev")
	if !second.Time.After(first.Time) || second.Error == "" || second.Trigger != hub.TriggerPoll {
		t.Fatalf("one interval after the failure: %+v, want a second try (trigger poll) that fails", second)
	}
	if err := os.Rename(away, f.gitops.Dir); err != nil {
		t.Fatal(err)
	}

	f.round() // the second failure waits two intervals
	if got := f.latest("dev"); !got.Time.Equal(second.Time) {
		t.Fatalf("dev was tried again one interval after its second failure: %+v", got)
	}
	f.round()
	retried := f.latest("dev")
	if retried.Error != "" || retried.Trigger != hub.TriggerPoll || f.tips()["dev"] == before["dev"] {
		t.Fatalf("two intervals after the second failure: %+v (tip moved: %v), want the change applied", retried, f.tips()["dev"] != before["dev"])
	}
	applied := false
	for _, content := range f.gitops.Files(t, "dev") {
		applied = applied || strings.Contains(content, "debug")
	}
	if !applied {
		t.Error("dev's branch does not have the change")
	}
	if f.tips()["prod"] != before["prod"] {
		t.Error("prod, which the change does not reach, was synced")
	}

	for range maxBackoff + 1 {
		f.round()
	}
	if got := f.latest("dev"); !got.Time.Equal(retried.Time) {
		t.Errorf("dev was synced again after its sync succeeded, nothing moving: %+v", got)
	}
}

// shopTargets is the apps repository's workload with a deployment target in dev for each
// name (each one a folder large/shop-NAME in dev's branch).
func shopTargets(names ...string) map[string]string {
	s := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: shop}\nspec:\n  deploymentTargets:\n"
	for _, n := range names {
		s += fmt.Sprintf("    - {name: %s, environment: dev, manifests: {repo: https://example.com/shop, branch: dev, path: ./%s, version: \"1\"}}\n", n, n)
	}
	return map[string]string{"shop.yaml": s}
}

// targetFolders counts the deployment-target folders of dev's branch.
func (f *fixture) targetFolders() int {
	f.t.Helper()
	n := 0
	for p := range f.gitops.Files(f.t, "dev") {
		if strings.HasPrefix(p, "large/") && strings.HasSuffix(p, "/reconciler.yaml") {
			n++
		}
	}
	return n
}

// confirm confirms the mass deletion dev's last sync refused.
func (f *fixture) confirm(reason string) {
	f.t.Helper()
	refused := f.latest("dev")
	if !strings.HasPrefix(refused.Error, hub.MassDeletionRefused) {
		f.t.Fatalf("dev's last sync refused no mass deletion: %+v", refused)
	}
	if err := f.hub.ConfirmMassDeletion(f.t.Context(), hub.MassDeletionConfirmation{Environment: "dev", Commit: refused.ControlPlaneCommit,
		Reason: reason, By: "ada"}); err != nil {
		f.t.Fatal(err)
	}
}

// TestMassDeletionConfirmationAnswersItsRefusal: a confirmation answers the refusal it
// confirms, at the same control-plane commit: it lets through that deletion or a smaller
// one, but neither a deletion of other folders planned before it is applied, nor a later
// mass deletion (a workload repository's, the control plane not moving), which are
// refused again until someone confirms them.
func TestMassDeletionConfirmationAnswersItsRefusal(t *testing.T) {
	f := newFixture(t)
	f.apps.Commit(t, "main", shopTargets("a", "b", "c", "d", "e", "f"))
	f.svc.round(t.Context(), map[string]bool{})
	f.round()
	if n := f.targetFolders(); n != 6 {
		t.Fatalf("dev has %d target folders, want 6", n)
	}

	// Five of six removed: refused, naming the folders, and not tried again by itself.
	f.apps.Commit(t, "main", shopTargets("a"))
	f.round()
	refused := f.latest("dev")
	if !strings.Contains(refused.Error, "large/shop-b") || f.targetFolders() != 6 {
		t.Fatalf("the refusal %q does not name the folders, or dev has %d folders", refused.Error, f.targetFolders())
	}
	f.round()
	if got := f.latest("dev"); !got.Time.Equal(refused.Time) {
		t.Fatalf("a refused mass deletion was tried again without a confirmation: %+v", got)
	}
	f.confirm("b to f are retired")
	commit := refused.ControlPlaneCommit

	// Before the confirmed deletion is applied, the repository also drops a: that plan
	// removes a folder the refusal did not name, and is refused again.
	f.apps.Commit(t, "main", shopTargets())
	f.round()
	if got := f.latest("dev"); !strings.HasPrefix(got.Error, hub.MassDeletionRefused) || f.targetFolders() != 6 {
		t.Fatalf("a deletion of other folders than the confirmed ones: %+v, %d folders", got, f.targetFolders())
	}
	f.round()
	if got := f.latest("dev"); f.targetFolders() != 6 || got.Trigger == hub.TriggerMassDeletion {
		t.Fatalf("the confirmation of a smaller deletion let a larger one through: %+v, %d folders", got, f.targetFolders())
	}

	// A smaller deletion than one confirmed is applied.
	f.confirm("all of shop is retired")
	f.apps.Commit(t, "main", shopTargets("a", "b"))
	f.round()
	if got := f.latest("dev"); got.Error != "" || f.targetFolders() != 2 {
		t.Fatalf("a deletion of some of the confirmed folders: %+v, %d folders, want 2", got, f.targetFolders())
	}

	// Later, at the same control-plane commit, the repository grows, then is emptied by
	// mistake: no confirmation answers that deletion.
	f.apps.Commit(t, "main", shopTargets("a", "b", "g", "h", "i"))
	f.round()
	f.apps.Commit(t, "main", shopTargets("a"))
	f.round()
	again := f.latest("dev")
	if again.ControlPlaneCommit != commit || !strings.HasPrefix(again.Error, hub.MassDeletionRefused) {
		t.Fatalf("a later mass deletion at the same control-plane commit: %+v", again)
	}
	f.round()
	f.round()
	if n := f.targetFolders(); n != 5 {
		t.Fatalf("a mass deletion nobody confirmed was applied with an earlier confirmation: %d folders, want 5", n)
	}
	f.confirm("g, h and i were a test")
	f.round()
	if got := f.latest("dev"); got.Error != "" || got.Trigger != hub.TriggerMassDeletion || f.targetFolders() != 1 {
		t.Errorf("after its own confirmation: %+v, %d folders, want 1", got, f.targetFolders())
	}
}

// TestMassDeletionConfirmationCoversTheLatestRefusal: when a refused deletion is refused
// again with fewer folders, a confirmation given then covers those fewer folders only.
func TestMassDeletionConfirmationCoversTheLatestRefusal(t *testing.T) {
	f := newFixture(t)
	f.apps.Commit(t, "main", shopTargets("a", "b", "c", "d", "e", "f"))
	f.svc.round(t.Context(), map[string]bool{})
	f.round()
	f.apps.Commit(t, "main", shopTargets("a"))
	f.round()
	f.apps.Commit(t, "main", shopTargets("a", "b"))
	f.round()
	if got := f.latest("dev"); strings.Contains(got.Error, "large/shop-b") {
		t.Fatalf("the second refusal names shop-b, which it keeps: %q", got.Error)
	}
	f.confirm("c to f are retired") // seeing the second refusal, which keeps b

	f.apps.Commit(t, "main", shopTargets("a"))
	f.round()
	f.round()
	if got := f.latest("dev"); f.targetFolders() != 6 || !strings.HasPrefix(got.Error, hub.MassDeletionRefused) {
		t.Fatalf("a deletion of b too, after a confirmation of the refusal that kept it: %+v, %d folders", got, f.targetFolders())
	}
	f.confirm("b to f are retired")
	f.round()
	if n := f.targetFolders(); n != 1 {
		t.Errorf("after its own confirmation: %d folders, want 1", n)
	}
}

// hookedHub is the fixture's hub, which calls synced (when set) after recording a sync,
// and polled after recording a source's state.
type hookedHub struct {
	*hub.Hub
	synced func(hub.SyncRecord)
	polled func(hub.SourceState)
}

func (h hookedHub) RecordSync(ctx context.Context, r hub.SyncRecord) error {
	err := h.Hub.RecordSync(ctx, r)
	if h.synced != nil {
		h.synced(r)
	}
	return err
}

func (h hookedHub) PutSource(ctx context.Context, s hub.SourceState) error {
	err := h.Hub.PutSource(ctx, s)
	if h.polled != nil {
		h.polled(s)
	}
	return err
}

// TestUnreadControlPlaneIsReadAgain: when the poll saw the control plane move but the round
// could not read it (here it is away right after the poll), the change is not lost: the
// control plane's next poll, after its failure's wait, finds it again and syncs it.
func TestUnreadControlPlaneIsReadAgain(t *testing.T) {
	f := newFixture(t)
	away := f.cp.Dir + ".away"
	hide := false
	h := hookedHub{Hub: f.hub, polled: func(s hub.SourceState) {
		if hide && s.Kind == KindControlPlane && s.LastError == "" {
			hide = false
			if err := os.Rename(f.cp.Dir, away); err != nil {
				t.Error(err)
			}
		}
	}}
	f.svc = New(Options{Fleet: f.svc.opts.Fleet, Interval: interval, Hub: h, Now: f.clock.Now})
	f.svc.round(t.Context(), map[string]bool{})
	f.round()
	before := f.tips()["dev"]
	synced := f.latest("dev")

	f.commit(map[string]string{"environments/dev/config.yaml": configMap("dev-config", "LOG_LEVEL", "debug")})
	hide = true
	f.round()
	if err := os.Rename(away, f.cp.Dir); err != nil {
		t.Fatal(err)
	}
	if got := f.latest("dev"); !got.Time.Equal(synced.Time) {
		t.Fatalf("dev was synced from a control plane that could not be read: %+v", got)
	}
	f.round()
	if got := f.latest("dev"); got.Error != "" || got.Trigger != hub.TriggerPoll || f.tips()["dev"] == before {
		t.Errorf("the round after the control plane could be read again: %+v (tip moved: %v)", got, f.tips()["dev"] != before)
	}
}

// TestLeaderThatLostItsLeaseStops: a leader checks its lease before every environment's
// sync; once it lost it (here its lock file is removed after dev's sync, as another process
// could then lock a new one) it syncs no other environment, and does not lead. Leading
// again, it starts with a sync of every environment, even when it lost the lease in its
// first round.
func TestLeaderThatLostItsLeaseStops(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	db := filepath.Join(t.TempDir(), "leader.db")
	store, err := sqlite.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	lose := false
	h := hookedHub{Hub: f.hub, synced: func(r hub.SyncRecord) {
		if lose && r.Environment == "dev" {
			lose = false
			if err := os.Remove(db + "." + LeaseName + ".lock"); err != nil {
				t.Error(err)
			}
		}
	}}
	f.svc = New(Options{Fleet: f.svc.opts.Fleet, Interval: interval, Hub: h, Leadership: store, Now: f.clock.Now})
	r := &replica{svc: f.svc}
	// step loses the lease after dev's sync when lose is set, and checks that no other
	// environment was synced then; it returns the tips before.
	step := func(lost bool) map[string]plumbing.Hash {
		t.Helper()
		before := f.tips()
		lose = lost
		f.clock.Advance(interval)
		r.step(t)
		if !lost {
			return before
		}
		if f.tips()["prod"] != before["prod"] {
			t.Errorf("prod was synced after the lease was lost: %+v", f.latest("prod"))
		}
		if f.svc.Leading() {
			t.Error("the replica leads with a lost lease")
		}
		return before
	}

	step(true) // the lease is lost in the first round
	if f.tips()["dev"].IsZero() || !f.tips()["prod"].IsZero() {
		t.Fatalf("the first round that lost the lease after dev: tips %v, want dev only", f.tips())
	}
	step(false) // the lock is free: it leads again, and syncs every environment
	if rec := f.latest("prod"); !f.svc.Leading() || rec.Trigger != hub.TriggerStart || f.tips()["prod"].IsZero() {
		t.Fatalf("leading again (%v): prod %+v", f.svc.Leading(), rec)
	}
	step(false)

	f.commit(map[string]string{"common.yaml": configMap("common", "RELEASE", "2")})
	before := step(true)
	if f.tips()["dev"] == before["dev"] {
		t.Fatal("dev, synced before the lease was lost, was not applied")
	}
	step(false)
	if rec := f.latest("prod"); !f.svc.Leading() || rec.Trigger != hub.TriggerStart || f.tips()["prod"] == before["prod"] {
		t.Errorf("leading again (%v): prod %+v", f.svc.Leading(), rec)
	}
}
