package gitops

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// StateFile is where, under the GitOps path, fleetform records what it rendered: for every
// assignment the digest of its inputs, and for every cluster-type folder the object name
// it wrote. The next apply re-renders only the assignments whose digest changed, and
// checks a folder in full only when someone else changed it. It has no extension, so
// reconcilers never read it as a manifest.
const StateFile = ".fleetform/state"

const stateHeader = "fleetform-state 1"

// state is the decoded StateFile.
type state struct {
	environment  string
	clusterTypes map[string]plumbing.Hash // folder name -> tree as written
	assignments  map[string]stateEntry    // "<clusterType>/<deploymentTarget>" -> entry
}

type stateEntry struct {
	digest    string
	workload  string
	namespace string
}

func newState(env string) *state {
	return &state{environment: env, clusterTypes: map[string]plumbing.Hash{}, assignments: map[string]stateEntry{}}
}

// encode writes the state as sorted lines:
//
//	fleetform-state 1
//	environment <env>
//	ct <clusterType> <tree>
//	a <clusterType>/<deploymentTarget> <digest> <workload> <namespace>
func (s *state) encode() []byte {
	var b bytes.Buffer
	b.Grow(64 * (len(s.assignments) + len(s.clusterTypes) + 2))
	fmt.Fprintf(&b, "%s\nenvironment %s\n", stateHeader, s.environment)
	for _, ct := range slices.Sorted(maps.Keys(s.clusterTypes)) {
		fmt.Fprintf(&b, "ct %s %s\n", ct, s.clusterTypes[ct])
	}
	for _, dir := range slices.Sorted(maps.Keys(s.assignments)) {
		e := s.assignments[dir]
		b.WriteString("a ")
		b.WriteString(dir)
		b.WriteByte(' ')
		b.WriteString(e.digest)
		b.WriteByte(' ')
		b.WriteString(orDash(e.workload))
		b.WriteByte(' ')
		b.WriteString(e.namespace)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// decodeState parses a state file; an unreadable one is reported, and the caller then
// treats every assignment as changed (a full comparison), which is always safe.
func decodeState(data []byte) (*state, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	if !sc.Scan() || sc.Text() != stateHeader {
		return nil, fmt.Errorf("%s: not a fleetform state file (version 1)", StateFile)
	}
	s := newState("")
	for n := 2; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "environment":
			s.environment = f[1]
		case len(f) == 3 && f[0] == "ct":
			s.clusterTypes[f[1]] = plumbing.NewHash(f[2])
		case len(f) == 5 && f[0] == "a":
			wl := f[3]
			if wl == "-" {
				wl = ""
			}
			s.assignments[f[1]] = stateEntry{digest: f[2], workload: wl, namespace: f[4]}
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", StateFile, n, sc.Text())
		}
	}
	return s, sc.Err()
}
