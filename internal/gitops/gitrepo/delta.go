package gitrepo

import (
	"bytes"
	"encoding/binary"
)

// Deltas. A GitOps commit holds thousands of files that differ from each other in a few
// names: the same file of every deployment-target folder of a cluster type. Each compressed
// on its own costs a deflate stream and its Huffman tables (most of a cold apply's
// compression time), and stores the same bytes again and again. So a blob written for a
// file name that an earlier blob of the pack had is written as a git delta of that earlier
// blob (an OFS_DELTA entry: "copy these bytes of the base, insert these"), as git's own
// repack would store it. Only blobs written whole are bases, so reading a blob back never
// resolves more than one delta; a pack still reads with any git.
const (
	// minDeltaSize is the smallest blob written as a delta: below it, a delta saves a few
	// bytes at most. maxDeltaSize is the largest, and the largest base: a base's lines are
	// indexed in memory, and a copy instruction holds an offset of 32 bits.
	minDeltaSize = 64
	maxDeltaSize = 1 << 20
	// deltaBaseUses is how many deltas one base serves before the next blob of that name is
	// written whole and serves as the next base: the folders of a cluster type drift from
	// their first one, and a base near them makes smaller deltas.
	deltaBaseUses = 256
	// maxDeltaNames bounds the names bases are kept for (their contents stay in memory):
	// beyond it, the bases are dropped and found again.
	maxDeltaNames = 4096
)

// deltaBase is a blob written whole that later blobs of the same file name are written as
// deltas of. Its lines are indexed when it becomes a base; deltas read the index at once
// on every core.
type deltaBase struct {
	content []byte
	lines   map[string]int // each line (with its newline) -> its first offset in content
	pos     int            // in pack.objects
	uses    int
}

func newDeltaBase(content []byte, pos int) *deltaBase {
	b := &deltaBase{content: content, pos: pos, lines: map[string]int{}}
	for off := 0; off < len(content); {
		end := lineEnd(content, off)
		if _, seen := b.lines[string(content[off:end])]; !seen {
			b.lines[string(content[off:end])] = off
		}
		off = end
	}
	return b
}

// lineEnd is the end of the line starting at off: after its newline, or the end of b.
func lineEnd(b []byte, off int) int {
	if i := bytes.IndexByte(b[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(b)
}

// deltaBases are the current bases, by file name.
type deltaBases map[string]*deltaBase

// baseFor returns the base to write a blob of the named file as a delta of (nil: the blob is
// written whole), and makes the blob the name's base when it is written whole. pos is the
// blob's position in the pack.
func (b *deltaBases) baseFor(name string, content []byte, pos int) *deltaBase {
	if len(content) < minDeltaSize || len(content) > maxDeltaSize {
		return nil
	}
	if *b == nil || len(*b) >= maxDeltaNames {
		*b = deltaBases{}
	}
	base := (*b)[name]
	if base != nil && base.uses < deltaBaseUses && len(content) <= 2*len(base.content) && len(base.content) <= 2*len(content) {
		base.uses++
		return base
	}
	(*b)[name] = newDeltaBase(content, pos)
	return nil
}

// deltaScratch holds the buffers a compressing goroutine makes deltas in, reused from one
// blob to the next: millions of blobs would otherwise each leave three buffers to collect.
type deltaScratch struct {
	out, insert, back []byte
}

// encodeDelta returns the git delta that makes content from base, and whether it is worth
// storing: at most half of content. The delta is applied before it is trusted, so a
// blob is never stored as a delta that would read back otherwise. The delta is in
// scratch, valid until its next use.
func encodeDelta(base *deltaBase, content []byte, scratch *deltaScratch) ([]byte, bool) {
	e := deltaEncoder{base: base, out: scratch.out[:0], insert: scratch.insert[:0]}
	d := e.delta(content)
	scratch.out, scratch.insert = e.out, e.insert
	if 2*len(d) > len(content) {
		return nil, false
	}
	back, err := applyDeltaTo(scratch.back, base.content, d)
	scratch.back = back
	if err != nil || !bytes.Equal(back, content) {
		return nil, false
	}
	return d, true
}

// deltaEncoder writes a delta line by line. A line found in the base is copied from it
// (and the copy goes on while the following lines follow in the base too); a line that is
// not is compared with the base's line where the copy left off, and what the two share at
// their start and end is copied around what is inserted. Files rendered from one template
// differ in a few names, so that is nearly all of what differs.
type deltaEncoder struct {
	base *deltaBase
	out  []byte
	// copyOff and copyLen are the copy being extended (copyLen 0: none); insert is the
	// content waiting to be inserted.
	copyOff, copyLen int
	insert           []byte
}

// minCopy is the shortest copy written: a copy takes up to 8 bytes of the delta.
const minCopy = 8

// delta writes the sizes of the base and of content, then the instructions that make
// content, and returns them.
func (e *deltaEncoder) delta(content []byte) []byte {
	e.out = binary.AppendUvarint(e.out, uint64(len(e.base.content)))
	e.out = binary.AppendUvarint(e.out, uint64(len(content)))
	e.encode(content)
	return e.out
}

func (e *deltaEncoder) encode(content []byte) {
	base := e.base.content
	next := -1 // where in the base the line after the last copy would be
	for off := 0; off < len(content); {
		end := lineEnd(content, off)
		line := content[off:end]
		off = end
		switch at, ok := e.base.lines[string(line)]; {
		case next >= 0 && bytes.HasPrefix(base[next:], line):
			e.copy(next, len(line))
			next += len(line)
		case ok:
			e.copy(at, len(line))
			next = at + len(line)
		case next >= 0 && next < len(base):
			e.alike(line, next, lineEnd(base, next))
			next = lineEnd(base, next)
		default:
			e.add(line)
		}
	}
	e.flush()
}

// alike writes line, not found in the base, as what it shares with the base's line
// base[from:to] at its start and at its end (copied) and the rest (inserted).
func (e *deltaEncoder) alike(line []byte, from, to int) {
	other := e.base.content[from:to]
	pre := 0
	for pre < len(line) && pre < len(other) && line[pre] == other[pre] {
		pre++
	}
	suf := 0
	for suf < len(line)-pre && suf < len(other)-pre && line[len(line)-1-suf] == other[len(other)-1-suf] {
		suf++
	}
	e.copy(from, pre)
	e.add(line[pre : len(line)-suf])
	e.copy(to-suf, suf)
}

// copy copies n bytes of the base from off, extending the copy before when it ends there.
// A copy shorter than minCopy is inserted instead.
func (e *deltaEncoder) copy(off, n int) {
	switch {
	case n == 0:
	case e.copyLen > 0 && e.copyOff+e.copyLen == off:
		e.copyLen += n
	case n < minCopy:
		e.add(e.base.content[off : off+n])
	default:
		e.flush()
		e.copyOff, e.copyLen = off, n
	}
}

// add inserts b.
func (e *deltaEncoder) add(b []byte) {
	if len(b) == 0 {
		return
	}
	e.flushCopy()
	e.insert = append(e.insert, b...)
}

func (e *deltaEncoder) flush() {
	e.flushCopy()
	e.flushInsert()
}

// flushInsert writes the waiting insert, 127 bytes per instruction at most.
func (e *deltaEncoder) flushInsert() {
	for b := e.insert; len(b) > 0; {
		n := min(len(b), 0x7f)
		e.out = append(e.out, byte(n))
		e.out = append(e.out, b[:n]...)
		b = b[n:]
	}
	e.insert = e.insert[:0]
}

// flushCopy writes the copy being extended, 0xffff bytes per instruction at most: an
// instruction's offset and size in the bytes that are not zero (flagged in its first byte).
func (e *deltaEncoder) flushCopy() {
	if e.copyLen == 0 {
		return
	}
	e.flushInsert()
	for off, n := e.copyOff, e.copyLen; n > 0; {
		size := min(n, 0xffff)
		op := len(e.out)
		e.out = append(e.out, 0x80)
		for i := range 4 {
			if v := byte(off >> (8 * i)); v != 0 { //nolint:gosec // one byte of off, below maxDeltaSize
				e.out[op] |= 1 << i
				e.out = append(e.out, v)
			}
		}
		for i := range 2 {
			if v := byte(size >> (8 * i)); v != 0 { //nolint:gosec // one byte of size, at most 0xffff
				e.out[op] |= 0x10 << i
				e.out = append(e.out, v)
			}
		}
		off, n = off+size, n-size
	}
	e.copyLen = 0
}

// ofsDeltaOffset appends the distance back from a delta's entry to its base's entry, as an
// OFS_DELTA entry stores it: 7 bits per byte, highest first, each continued byte minus one.
func ofsDeltaOffset(b []byte, distance uint64) []byte {
	var tmp [10]byte
	i := len(tmp) - 1
	tmp[i] = byte(distance & 0x7f)
	for distance >>= 7; distance > 0; distance >>= 7 {
		distance--
		i--
		tmp[i] = 0x80 | byte(distance&0x7f)
	}
	return append(b, tmp[i:]...)
}
