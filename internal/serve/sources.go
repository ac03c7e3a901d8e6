package serve

import (
	"time"
	"unicode/utf8"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/repourl"
)

// Source kinds, as the hub records them.
const (
	KindControlPlane = hub.SourceKindControlPlane
	KindWorkload     = hub.SourceKindWorkload
	KindBase         = hub.SourceKindBase
)

// source is one polled repository: the control plane, a registration's workload
// repository, or a BaseRepo's repository.
type source struct {
	url    string // as the control plane (or the command line) names it
	kind   string
	branch string            // the branch its content is read at ("" for the control plane: every branch)
	refs   map[string]string // where its branches pointed at the last successful poll
	polled bool

	failures int
	next     time.Time // when it is polled again
	lastPoll time.Time
	lastSync time.Time
	lastErr  string
	// recorded is the state last written to the hub (nil: none yet).
	recorded *hub.SourceState
}

// sourceKey identifies a source: its repository and the branch it is read at (a repository
// read at two branches is two sources; the control plane, read at every branch, has "").
func sourceKey(url, branch string) string {
	if branch == "" {
		return repourl.Key(url)
	}
	return repourl.Key(url) + "\x00" + branch
}

// maxBackoff bounds a failing source's wait, in intervals: Fleet's users burn their rate
// limit on repositories that keep failing; this waits up to ten intervals instead.
const maxBackoff = 10

// backoff returns how long after its failures-th consecutive failure a source is polled
// again: the interval, doubled for each failure after the first, at most ten intervals.
func backoff(interval time.Duration, failures int) time.Duration {
	wait := interval
	for i := 1; i < failures && wait < maxBackoff*interval; i++ {
		wait *= 2
	}
	return min(wait, maxBackoff*interval)
}

// changed reports whether the refs that matter moved since the last poll: the source's
// branch (HEAD when it names none), or for the control plane every branch.
func (s *source) changed(refs map[string]string) []string {
	if !s.polled {
		return nil // the first poll is what there is
	}
	var moved []string
	for _, name := range s.watched(refs) {
		if s.refs[name] != refs[name] {
			moved = append(moved, name)
		}
	}
	return moved
}

// watched are the refs of refs (and of the last poll) that matter for this source.
func (s *source) watched(refs map[string]string) []string {
	if s.kind != KindControlPlane {
		b := s.branch
		if b == "" {
			b = "HEAD"
		}
		if _, ok := refs[controlplane.DirRef]; ok {
			b = controlplane.DirRef
		}
		return []string{b}
	}
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]string{s.refs, refs} {
		for name := range m {
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out
}

// shownURL is a repository URL as serve records, shows and logs it: without credentials
// (user information, query string).
func shownURL(raw string) string {
	shown, _ := repourl.WithoutCredentials(raw)
	return shown
}

// clip cuts s to at most n bytes, on a character boundary, saying it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const more = " …(cut)"
	cut := n - len(more)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}
