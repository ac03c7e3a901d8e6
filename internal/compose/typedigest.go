package compose

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"maps"
	"slices"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// typeDigests is what TypeDigest needs: the digest of the sources every cluster type shares
// (those that name no cluster type) and of the schemas, and, for each source that names a
// cluster type, how many shared sources precede it.
type typeDigests struct {
	precedence   string
	shared       [32]byte
	sharedBefore []int
}

// TypeDigest identifies every input of the compositions on cluster type ct without
// composing any: the sources that can apply to a target on ct, in precedence order (every
// source that names no cluster type, and those naming ct), every schema, the precedence mode
// and ct's name and labels. Equal digests mean that Compose and SchemaDigest give the same
// results for (ct, dt), for every deployment target dt (whose own inputs the caller
// identifies). A source naming another cluster type changes no other type's digest.
func (c *Composer) TypeDigest(ct *controlplane.ClusterType) [32]byte {
	c.typesOnce.Do(c.prepareTypeDigests)
	h := sha256.New()
	h.Write([]byte("compose-type/1"))
	h.Write(c.types.shared[:])
	var n [8]byte
	for _, i := range c.ix.byType[ct.Metadata.Name] {
		binary.LittleEndian.PutUint64(n[:], uint64(c.types.sharedBefore[i])) //nolint:gosec // a count
		h.Write(n[:])
		h.Write(c.contribs[i].raw[:])
	}
	writeLabels(h, ct.Metadata.Name, "", ct.Metadata.Labels)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func (c *Composer) prepareTypeDigests() {
	h := sha256.New()
	writeFields(h, c.types.precedence)
	c.types.sharedBefore = make([]int, len(c.contribs))
	shared := 0
	for i := range c.contribs {
		c.types.sharedBefore[i] = shared
		if has(c.ix.labels[i], v1alpha1.LabelClusterType) {
			continue
		}
		shared++
		h.Write(c.contribs[i].raw[:])
	}
	writeFields(h, "schemas")
	for i, s := range c.schemas.schemas {
		writeLabels(h, s.name, s.text, c.schemas.ix.labels[i])
	}
	h.Sum(c.types.shared[:0])
}

// rawDigest identifies a source by its name, Azure key, matching labels and raw values.
func rawDigest(name, azureKey string, labels map[string]string, keys []string, data map[string]string) [32]byte {
	h := sha256.New()
	writeLabels(h, name, azureKey, labels)
	for _, k := range keys {
		writeFields(h, k, data[k])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// writeLabels writes two fields and a label set, sorted.
func writeLabels(h hash.Hash, a, b string, labels map[string]string) {
	writeFields(h, a, b)
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(labels)))
	h.Write(n[:])
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		writeFields(h, k, labels[k])
	}
}

// writeFields writes each string with its length, so that fields cannot run together.
func writeFields(h hash.Hash, ss ...string) {
	var n [8]byte
	for _, s := range ss {
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
}
