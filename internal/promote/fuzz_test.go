package promote

import (
	"testing"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// FuzzParseWindow: any freeze window either parses into one whose checks never panic, or
// is an error; a weekly window contains its own start.
func FuzzParseWindow(f *testing.F) {
	f.Add("Fri 16:00", "Mon 08:00", "Europe/Berlin", "", "")
	f.Add("", "", "", "2026-12-20T00:00:00Z", "2027-01-03T00:00:00Z")
	f.Add("sunday 00:00", "Sat 23:59", "UTC", "", "")
	f.Add("İİİ 1:1", "x", "", "", "")
	f.Add("\u212a 1:1", "x", "", "", "") // KELVIN SIGN lowercases to one byte: CI found a panic here
	f.Add("Friday 16:00", "monday 08:00", "", "", "")
	f.Fuzz(func(t *testing.T, weeklyFrom, weeklyTo, tz, from, to string) {
		w := v1alpha1.FreezeWindow{From: from, To: to, TimeZone: tz, Reason: "fuzz"}
		if weeklyFrom != "" || weeklyTo != "" {
			w.Weekly = &v1alpha1.WeeklyWindow{From: weeklyFrom, To: weeklyTo}
		}
		win, err := parseWindow(w)
		if err != nil {
			return
		}
		at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
		if _, frozen := Active([]Window{win}, at); frozen && win.Until(at) == "" {
			t.Fatalf("window %+v is open at %s with no end", win, at)
		}
		if win.Weekly && win.WeeklyFrom != win.WeeklyTo {
			m := win.WeeklyFrom
			start := time.Date(2026, 11, 15+m/(24*60), m/60%24, m%60, 0, 0, win.Location) // from a Sunday
			if _, frozen := Active([]Window{win}, start); !frozen {
				t.Fatalf("weekly window %+v does not contain its start %s", win, start)
			}
		}
	})
}
