package promote

import (
	"testing"
	"time"
)

func TestWindowString(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	w := Window{Weekly: true, WeeklyFrom: 5*24*60 + 16*60, WeeklyTo: 1*24*60 + 8*60, Location: berlin, Reason: "weekend"}
	if got := w.String(); got != "weekly Fri 16:00 to Mon 08:00 Europe/Berlin: weekend" {
		t.Errorf("weekly: %q", got)
	}
	from := time.Date(2026, 12, 20, 0, 0, 0, 0, time.UTC)
	w = Window{From: from, To: from.Add(14 * 24 * time.Hour)}
	if got := w.String(); got != "2026-12-20T00:00:00Z to 2027-01-03T00:00:00Z" {
		t.Errorf("absolute: %q", got)
	}
	if got := (Gates{Freeze: []Window{w}}).Freezes(); len(got) != 1 {
		t.Errorf("Freezes %v", got)
	}
}
