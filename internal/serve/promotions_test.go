package serve

import (
	"testing"
)

// TestManualPromotions: the promotions page's review changes nothing; a promotion asked for
// pins the commit on the control plane and wakes the service to apply it.
func TestManualPromotions(t *testing.T) {
	f := newFixture(t)
	f.round()
	p := f.svc.Promotions()
	before := f.cp.Tip(t, "main")
	statuses, err := p.Review(t.Context())
	if err != nil || len(statuses) != 2 || statuses[0].Candidate != before.String() || len(statuses[0].Unmet) != 0 {
		t.Fatalf("review: %+v, %v", statuses, err)
	}
	if f.cp.Tip(t, "main") != before || len(f.svc.wake) != 0 {
		t.Fatal("a review wrote or woke something")
	}
	res, err := p.Promote(t.Context(), "dev", "ann: first release", "first release", false, nil)
	if err != nil || !res.Promoted || res.PinCommit == "" {
		t.Fatalf("promote dev: %+v, %v", res, err)
	}
	if f.cp.Tip(t, "main") == before {
		t.Fatal("no pin commit on the control plane")
	}
	if len(f.svc.wake) != 1 {
		t.Fatal("the service was not woken to apply the promotion")
	}
	if _, err := p.Promote(t.Context(), "nowhere", "ann", "x", false, nil); err == nil {
		t.Fatal("a promotion into an unknown environment was accepted")
	}
}
