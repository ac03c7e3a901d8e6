package promote

import (
	"fmt"
	"strings"
	"time"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Window is a parsed freeze window.
type Window struct {
	// Absolute windows.
	From, To time.Time
	// Weekly windows: minutes since Sunday 00:00 in Location.
	WeeklyFrom, WeeklyTo int
	Weekly               bool
	Location             *time.Location
	Reason               string
}

// weekday reads a day as its three-letter abbreviation or its full English name, in any case.
func weekday(s string) (time.Weekday, bool) {
	lower := strings.ToLower(s) // may change the byte length: compare, never slice by len(s)
	for d := time.Sunday; d <= time.Saturday; d++ {
		full := strings.ToLower(d.String())
		if lower == full || lower == full[:3] {
			return d, true
		}
	}
	return 0, false
}

func parseWindow(w v1alpha1.FreezeWindow) (Window, error) {
	out := Window{Reason: w.Reason, Location: time.UTC}
	switch {
	case w.Weekly != nil && (w.From != "" || w.To != ""):
		return out, fmt.Errorf("a freeze window is either absolute (from, to) or weekly, not both")
	case w.Weekly != nil:
		if w.TimeZone != "" {
			loc, err := time.LoadLocation(w.TimeZone)
			if err != nil {
				return out, fmt.Errorf("timeZone %q: %w", w.TimeZone, err)
			}
			out.Location = loc
		}
		var err error
		if out.WeeklyFrom, err = parseWeekTime(w.Weekly.From); err != nil {
			return out, err
		}
		if out.WeeklyTo, err = parseWeekTime(w.Weekly.To); err != nil {
			return out, err
		}
		out.Weekly = true
		return out, nil
	}
	var err error
	if out.From, err = time.Parse(time.RFC3339, w.From); err != nil {
		return out, fmt.Errorf("from %q: want an RFC 3339 time such as 2026-12-20T00:00:00Z", w.From)
	}
	if out.To, err = time.Parse(time.RFC3339, w.To); err != nil {
		return out, fmt.Errorf("to %q: want an RFC 3339 time such as 2027-01-03T00:00:00Z", w.To)
	}
	if !out.To.After(out.From) {
		return out, fmt.Errorf("to must be after from")
	}
	return out, nil
}

// parseWeekTime parses "Fri 16:00" into minutes since Sunday 00:00.
func parseWeekTime(s string) (int, error) {
	day, clock, ok := strings.Cut(strings.TrimSpace(s), " ")
	wd, known := weekday(day)
	t, err := time.Parse("15:04", strings.TrimSpace(clock))
	if !ok || !known || err != nil {
		return 0, fmt.Errorf("%q: want a weekday and a time, such as \"Fri 16:00\"", s)
	}
	return int(wd)*24*60 + t.Hour()*60 + t.Minute(), nil
}

// Active returns the window in effect at now, if any.
func Active(windows []Window, now time.Time) (Window, bool) {
	for _, w := range windows {
		if w.contains(now) {
			return w, true
		}
	}
	return Window{}, false
}

func (w Window) contains(now time.Time) bool {
	if !w.Weekly {
		return !now.Before(w.From) && now.Before(w.To)
	}
	local := now.In(w.Location)
	m := int(local.Weekday())*24*60 + local.Hour()*60 + local.Minute()
	if w.WeeklyFrom <= w.WeeklyTo {
		return m >= w.WeeklyFrom && m < w.WeeklyTo
	}
	return m >= w.WeeklyFrom || m < w.WeeklyTo // wraps around the week (Fri to Mon)
}

// Until describes when the window ends, for messages.
func (w Window) Until(now time.Time) string {
	if !w.Weekly {
		return w.To.UTC().Format(time.RFC3339)
	}
	local := now.In(w.Location)
	m := int(local.Weekday())*24*60 + local.Hour()*60 + local.Minute()
	left := (w.WeeklyTo - m + 7*24*60) % (7 * 24 * 60)
	return local.Add(time.Duration(left) * time.Minute).Truncate(time.Minute).Format("Mon 15:04 MST")
}

// String describes the window for people: "2026-12-20T00:00:00Z to 2027-01-03T00:00:00Z:
// year end", or "weekly Fri 16:00 to Mon 08:00 Europe/Berlin: weekend".
func (w Window) String() string {
	var s string
	if w.Weekly {
		clock := func(m int) string {
			return fmt.Sprintf("%s %02d:%02d", time.Weekday(m / (24 * 60)).String()[:3], m%(24*60)/60, m%60)
		}
		loc := "UTC"
		if w.Location != nil {
			loc = w.Location.String()
		}
		s = "weekly " + clock(w.WeeklyFrom) + " to " + clock(w.WeeklyTo) + " " + loc
	} else {
		s = w.From.UTC().Format(time.RFC3339) + " to " + w.To.UTC().Format(time.RFC3339)
	}
	if w.Reason != "" {
		s += ": " + w.Reason
	}
	return s
}
