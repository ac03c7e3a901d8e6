package gitrepo

import (
	"bytes"
	"encoding/binary"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
)

// objectIndex records a pack's objects in the order they are added, each with its index
// entry (its name when added, its offset and checksum once written), and finds an object by
// its name. A cold apply of a million assignments adds four million objects: a map of
// names kept beside the entries cost about 100 MB at that size, where this table of
// positions (open addressing, 4 bytes a slot, at most half full) costs 32 MB, and every
// byte of it is room the collector does not have under the memory limit.
type objectIndex struct {
	blocks [][]idxEntry // in blocks of 1<<entryBits: no copy as the pack grows
	n      int
	slots  []uint32 // 0: empty; else an object's position + 1
}

type idxEntry struct {
	hash   plumbing.Hash
	crc    uint32
	offset uint64
}

// entryBits sets how many entries a block of objectIndex holds (1<<entryBits).
var entryBits = 16 // a variable for the tests

// maxObjects is how many objects a pack holds: its header and index count them in 32 bits.
const maxObjects = math.MaxUint32 - 1

// at is the entry of the object at pos.
func (x *objectIndex) at(pos int) *idxEntry {
	return &x.blocks[pos>>entryBits][pos&(1<<entryBits-1)]
}

// reserve makes room for n objects in all without growing the table on the way.
func (x *objectIndex) reserve(n int) {
	if 2*n > len(x.slots) {
		x.rehash(n)
	}
}

// add records the object h unless it is recorded already, and reports whether it was new;
// pos is its position either way. It fails (ok false, pos -1) when the pack is full.
func (x *objectIndex) add(h plumbing.Hash) (pos int, added bool) {
	if x.n >= maxObjects {
		return -1, false
	}
	if 2*(x.n+1) > len(x.slots) {
		x.rehash(x.n + 1)
	}
	mask := uint64(len(x.slots) - 1) //nolint:gosec // a power of two, at least 1024
	for i := slotOf(h) & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == 0 {
			pos = x.n
			x.append(idxEntry{hash: h})
			x.slots[i] = uint32(pos + 1) //nolint:gosec // pos < maxObjects
			return pos, true
		}
		if x.at(int(s-1)).hash == h {
			return int(s - 1), false
		}
	}
}

func (x *objectIndex) append(e idxEntry) {
	if x.n>>entryBits == len(x.blocks) {
		x.blocks = append(x.blocks, make([]idxEntry, 1<<entryBits))
	}
	*x.at(x.n) = e
	x.n++
}

// slotOf is where an object's search starts: names are SHA-1 sums, uniform in every bit.
func slotOf(h plumbing.Hash) uint64 { return binary.LittleEndian.Uint64(h[4:12]) }

// rehash sizes the table for at least n objects (at most half full) and places them again.
func (x *objectIndex) rehash(n int) {
	size := 1024
	for size < 2*n {
		size *= 2
	}
	x.slots = make([]uint32, size)
	mask := uint64(size - 1) //nolint:gosec // a power of two, at least 1024
	for pos := range x.n {
		i := slotOf(x.at(pos).hash) & mask
		for x.slots[i] != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = uint32(pos + 1) //nolint:gosec // pos < maxObjects
	}
}

// sorted returns every entry ordered by name, for the pack's index, and releases the
// table: the index can find nothing afterwards. The entries are placed by their first byte
// (the index's fan-out), then each of the 256 runs is sorted, on every core.
func (x *objectIndex) sorted() []idxEntry {
	x.slots = nil
	var starts [257]int
	for pos := range x.n {
		starts[int(x.at(pos).hash[0])+1]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	out := make([]idxEntry, x.n)
	next := starts
	for b, block := range x.blocks {
		block = block[:min(len(block), x.n-b<<entryBits)]
		for _, e := range block {
			out[next[e.hash[0]]] = e
			next[e.hash[0]]++
		}
		x.blocks[b] = nil // placed: released as the copy grows
	}
	x.blocks, x.n = nil, 0
	var wg sync.WaitGroup
	work := make(chan int, 256)
	for b := range 256 {
		work <- b
	}
	close(work)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for b := range work {
				slices.SortFunc(out[starts[b]:starts[b+1]], func(a, b idxEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) })
			}
		})
	}
	wg.Wait()
	return out
}
