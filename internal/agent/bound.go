package agent

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fleetform/fleetform/internal/hub"
)

// Bounds of a report an agent sends. They keep a report under about 0.7 MB whatever the
// cluster holds (the hub accepts up to hub.MaxDeploymentsPerReport deployments and
// hub.MaxMessageLength bytes of message).
const (
	// MaxDeployments is the number of deployment targets a report lists. Beyond it, the
	// failed targets are kept first, then the progressing ones, then the ready ones, each
	// group in name order; the message says how many were left out, and the hub counts
	// those by the cluster's status.
	MaxDeployments = 1000
	// MaxMessage is the length in bytes of a report's message; a longer one is cut at a
	// character boundary and ends with "…".
	MaxMessage = 1024
	// MaxRevision is the length in bytes of a revision; a longer one is cut.
	MaxRevision = 128
)

// Bound returns r within the bounds above, with its deployments sorted by target name. It
// never changes r.
func Bound(r hub.Report) hub.Report {
	deps := slices.Clone(r.Deployments)
	for i := range deps {
		deps[i].Revision = cut(deps[i].Revision, MaxRevision, "")
	}
	msg := r.Message
	if len(deps) > MaxDeployments {
		slices.SortFunc(deps, func(a, b hub.DeploymentReport) int {
			return cmp.Or(cmp.Compare(severity(a.Status), severity(b.Status)),
				strings.Compare(a.DeploymentTarget, b.DeploymentTarget))
		})
		left := len(deps) - MaxDeployments
		deps = deps[:MaxDeployments]
		note := fmt.Sprintf("%d more deployment targets not listed", left)
		if msg == "" {
			msg = note
		} else {
			msg = note + "; " + msg
		}
	}
	slices.SortFunc(deps, func(a, b hub.DeploymentReport) int {
		return strings.Compare(a.DeploymentTarget, b.DeploymentTarget)
	})
	r.Deployments = deps
	r.Message = cut(msg, MaxMessage, "…")
	r.Revision = cut(r.Revision, MaxRevision, "")
	return r
}

// severity orders statuses for the cut: the ones a human must see first come first.
func severity(s hub.DeploymentStatus) int {
	switch s {
	case hub.Failed:
		return 0
	case hub.DeploymentProgress:
		return 1
	}
	return 2
}

// cut returns s cut to at most limit bytes at a character boundary, ending with suffix
// when it was cut.
func cut(s string, limit int, suffix string) string {
	if len(s) <= limit {
		return s
	}
	end := limit - len(suffix)
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + suffix
}
