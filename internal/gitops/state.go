package gitops

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/render"
)

// fleetform's state, under the GitOps path: for every cluster type, a shard listing what
// each of its assignments was rendered from (the digest of its inputs), and an index of
// the cluster-type folders as written. An apply computes, from the current inputs, the shard
// every cluster type would have: a cluster type whose shard has the same object name as the
// one in the tree, and whose folder nobody else changed, needs nothing at all. So nothing
// changed costs one tree read, and a change reads only the shards of the cluster types it
// touches. The files have no extension, so reconcilers never read them as manifests.
const (
	// StateDir holds fleetform's state.
	StateDir = ".fleetform"
	// IndexFile lists the cluster-type folders as written.
	IndexFile = StateDir + "/index"
	// ShardDir holds one shard per cluster type.
	ShardDir = StateDir + "/clustertypes"
	// KeysDir holds, per cluster type, the key of each assignment its shard's digest was
	// computed for (render.Renderer.AssignmentKey), written with the shard: a changed
	// cluster type composes only the assignments whose key changed.
	KeysDir = StateDir + "/keys"
	// WorkloadsDir holds, per cluster type, the key of each workload's assignments on it
	// (render.WorkloadKey), written when its folder holds exactly what they render: a plan
	// of a change to a few workloads reads these instead of its shard and keys.
	WorkloadsDir = StateDir + "/workloads"
)

const indexHeader = "fleetform-state 2"

// index is the decoded IndexFile.
type index struct {
	environment string
	// common is the control-plane commit whose common content was rendered, pinned or not
	// ("" for a plain directory).
	common string
	types  map[string]indexEntry
}

type indexEntry struct {
	tree    plumbing.Hash // the cluster-type folder as written
	targets int           // how many deployment-target folders it holds
	// key is the cluster type's render.Renderer.TypeKey when it was written with no failed
	// assignment ("" otherwise): the same key again means nothing to prepare.
	key string
}

func newIndex(env string) *index { return &index{environment: env, types: map[string]indexEntry{}} }

// encode writes "fleetform-state 2", "environment <env>", "common <commit>" (when known),
// then "ct <name> <tree> <targets>", followed by " <key>" when the key is known.
func (x *index) encode() []byte { return x.encodeKeys(true) }

// encodeKeys is encode, with or without the cluster types' keys.
func (x *index) encodeKeys(keys bool) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nenvironment %s\n", indexHeader, x.environment)
	if x.common != "" {
		fmt.Fprintf(&b, "common %s\n", x.common)
	}
	for _, ct := range slices.Sorted(maps.Keys(x.types)) {
		e := x.types[ct]
		fmt.Fprintf(&b, "ct %s %s %d", ct, e.tree, e.targets)
		if keys && e.key != "" {
			fmt.Fprintf(&b, " %s", e.key)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func decodeIndex(data []byte) (*index, error) {
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) == 0 || lines[0] != indexHeader {
		return nil, fmt.Errorf("%s: not a fleetform state index (version 2)", IndexFile)
	}
	x := newIndex("")
	for n, line := range lines[1:] {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "environment":
			x.environment = f[1]
		case len(f) == 2 && f[0] == "common":
			x.common = f[1]
		case (len(f) == 4 || len(f) == 5) && f[0] == "ct":
			count, err := strconv.Atoi(f[3])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", IndexFile, n+2, err)
			}
			e := indexEntry{tree: plumbing.NewHash(f[2]), targets: count}
			if len(f) == 5 {
				e.key = f[4]
			}
			x.types[f[1]] = e
		default:
			return nil, fmt.Errorf("%s:%d: unexpected line %q", IndexFile, n+2, line)
		}
	}
	if x.environment == "" {
		return nil, fmt.Errorf("%s: no environment line", IndexFile)
	}
	return x, nil
}

// shard is what one cluster type's assignments were rendered from, by deployment target.
type shard map[string]shardEntry

type shardEntry struct {
	digest   string
	workload string
}

// shardLine appends "<deploymentTarget> <digest> <workload>\n" ("-" for no workload).
func shardLine(b []byte, dt string, e shardEntry) []byte {
	b = append(b, dt...)
	b = append(b, ' ')
	b = append(b, e.digest...)
	b = append(b, ' ')
	b = append(b, workloadField(e.workload)...)
	return append(b, '\n')
}

// workloadField is how the state files write a workload's name: "-" for none.
func workloadField(wl string) string {
	if wl == "" {
		return "-"
	}
	return wl
}

// workloadOfField reads a workload's name as workloadField writes it.
func workloadOfField(field string) string {
	if field == "-" {
		return ""
	}
	return field
}

// encode writes the shard sorted by deployment target.
func (s shard) encode() []byte {
	var b []byte
	for _, dt := range slices.Sorted(maps.Keys(s)) {
		b = shardLine(b, dt, s[dt])
	}
	return b
}

func decodeShard(name string, data []byte) (shard, error) {
	text := string(data) // one string: the entries' fields are slices of it
	s := make(shard, strings.Count(text, "\n")+1)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		dt, e, ok := shardEntryFields(line)
		if !ok {
			return nil, fmt.Errorf("%s/%s:%d: unexpected line %q", ShardDir, name, n, line)
		}
		s[dt] = e
	}
	return s, nil
}

// shardEntryFields splits a shard line into its target and entry (shardFields).
func shardEntryFields(line string) (string, shardEntry, bool) {
	dt, digest, wl, ok := shardFields(line)
	return dt, shardEntry{digest: digest, workload: workloadOfField(wl)}, ok
}

// shardFields splits a shard line into its three space-separated fields (no field empty,
// nothing else on the line).
func shardFields(line string) (dt, digest, workload string, ok bool) {
	dt, rest, ok1 := strings.Cut(line, " ")
	digest, workload, ok2 := strings.Cut(rest, " ")
	ok = ok1 && ok2 && dt != "" && digest != "" && workload != "" && !strings.ContainsAny(workload, " \t\r") &&
		!strings.ContainsAny(dt, "\t\r") && !strings.ContainsAny(digest, "\t\r")
	return dt, digest, workload, ok
}

// assignmentKeys are the keys of a cluster type's assignments, by deployment target.
type assignmentKeys map[string]string

// encode writes "<deploymentTarget> <key>" lines, sorted by deployment target.
func (k assignmentKeys) encode() []byte {
	var b []byte
	for _, dt := range slices.Sorted(maps.Keys(k)) {
		b = keysLine(b, dt, k[dt])
	}
	return b
}

// keysLine appends "<deploymentTarget> <key>\n".
func keysLine(b []byte, dt, key string) []byte {
	b = append(b, dt...)
	b = append(b, ' ')
	b = append(b, key...)
	return append(b, '\n')
}

func decodeKeys(name string, data []byte) (assignmentKeys, error) {
	text := string(data)
	k := make(assignmentKeys, strings.Count(text, "\n")+1)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		dt, key, ok := keysFields(line)
		if !ok {
			return nil, fmt.Errorf("%s/%s:%d: unexpected line %q", KeysDir, name, n, line)
		}
		k[dt] = key
	}
	return k, nil
}

// keysFields splits a keys line into its two space-separated fields (neither empty,
// nothing else on the line).
func keysFields(line string) (dt, key string, ok bool) {
	dt, key, ok = strings.Cut(line, " ")
	ok = ok && dt != "" && key != "" && !strings.ContainsAny(line, "\t\r") && !strings.Contains(key, " ")
	return dt, key, ok
}

// workloadKey is what the state records of one workload's assignments on a cluster type.
type workloadKey struct {
	workload string
	key      string // render.WorkloadKey.String
	targets  string // render.WorkloadTargets
}

// encodeWorkloadKeys writes "shard <blob>" (the shard they were recorded with), then
// "<workload> <key> <targets>" lines ("-" for no workload; targets as
// render.WorkloadTargets has them), in the order of keys (sorted by workload, as
// render.Renderer.TypeKeys makes them).
func encodeWorkloadKeys(shard plumbing.Hash, keys []render.WorkloadKey, targets map[string]string) []byte {
	b := make([]byte, 0, 48+len(keys)*96)
	b = append(b, "shard "...)
	b = append(b, shard.String()...)
	b = append(b, '\n')
	for _, k := range keys {
		b = append(b, workloadField(k.Workload)...)
		b = append(b, ' ')
		b = hex.AppendEncode(b, k.Key[:])
		b = append(b, ' ')
		b = append(b, targets[k.Workload]...)
		b = append(b, '\n')
	}
	return b
}

// decodeWorkloadKeys decodes encodeWorkloadKeys: the shard, and the keys in their order.
func decodeWorkloadKeys(name string, data []byte) (plumbing.Hash, []workloadKey, error) {
	text := string(data) // one string: the keys' fields are slices of it
	head, text, _ := strings.Cut(text, "\n")
	shard, ok := strings.CutPrefix(head, "shard ")
	if !ok || !plumbing.IsHash(shard) {
		return plumbing.ZeroHash, nil, fmt.Errorf("%s/%s:1: unexpected line %q", WorkloadsDir, name, head)
	}
	keys := make([]workloadKey, 0, strings.Count(text, "\n"))
	for n := 2; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		wl, rest, ok1 := strings.Cut(line, " ")
		key, targets, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || wl == "" || key == "" || targets == "" || strings.ContainsAny(targets, " \t\r") ||
			strings.ContainsAny(line, "\t\r") {
			return plumbing.ZeroHash, nil, fmt.Errorf("%s/%s:%d: unexpected line %q", WorkloadsDir, name, n, line)
		}
		keys = append(keys, workloadKey{workload: workloadOfField(wl), key: key, targets: targets})
	}
	return plumbing.NewHash(shard), keys, nil
}

// RenderedCommit returns the control-plane commit whose common content an IndexFile says
// was rendered, or "" when it does not say.
func RenderedCommit(indexFile []byte) (string, error) {
	x, err := decodeIndex(indexFile)
	if err != nil {
		return "", err
	}
	return x.common, nil
}
