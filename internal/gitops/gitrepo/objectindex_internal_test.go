package gitrepo

import (
	"bytes"
	"crypto/sha1" //nolint:gosec // git object names are SHA-1
	"encoding/binary"
	"slices"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestObjectIndex adds names (each one several times, in blocks of 16 entries, growing the
// table and with it reserved): each is recorded once, at the position it was first given,
// found again, and sorted returns every entry once, in the order of names.
func TestObjectIndex(t *testing.T) {
	defer func(n int) { entryBits = n }(entryBits)
	entryBits = 4
	name := func(i int) plumbing.Hash {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(i)) //nolint:gosec // i >= 0
		return sha1.Sum(b[:])                       //nolint:gosec // git object names are SHA-1
	}
	for _, reserve := range []int{0, 5000} {
		var x objectIndex
		x.reserve(reserve)
		const n = 3000
		for round := range 3 {
			for i := range n {
				pos, added := x.add(name(i))
				if added != (round == 0) || pos != i {
					t.Fatalf("reserve %d, round %d: add(name %d) = %d, %v; want %d, %v", reserve, round, i, pos, added, i, round == 0)
				}
				x.at(pos).offset = uint64(i) //nolint:gosec // i >= 0
			}
		}
		if x.n != n {
			t.Fatalf("%d objects recorded, want %d", x.n, n)
		}
		entries := x.sorted()
		if len(entries) != n {
			t.Fatalf("sorted: %d entries, want %d", len(entries), n)
		}
		if !slices.IsSortedFunc(entries, func(a, b idxEntry) int { return bytes.Compare(a.hash[:], b.hash[:]) }) {
			t.Fatal("sorted: entries out of order")
		}
		seen := make([]bool, n)
		for _, e := range entries {
			if e.hash != name(int(e.offset)) || seen[e.offset] { //nolint:gosec // offsets are < n here
				t.Fatalf("sorted: entry %v with offset %d is not name %d, or repeated", e.hash, e.offset, e.offset)
			}
			seen[e.offset] = true
		}
	}
}
