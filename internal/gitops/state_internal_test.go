package gitops

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/fleetform/fleetform/internal/render"
)

// TestIndexKeys: an index keeps each cluster type's key (when there is one) through encoding,
// and an index written without keys reads as keyless.
func TestIndexKeys(t *testing.T) {
	x := newIndex("dev")
	x.common = "0123456789abcdef0123456789abcdef01234567"
	x.types["east"] = indexEntry{tree: plumbing.NewHash("1111111111111111111111111111111111111111"), targets: 3, key: "5ecb905d9b7185c86e951cbe20d1d34b"}
	x.types["west"] = indexEntry{tree: plumbing.NewHash("2222222222222222222222222222222222222222"), targets: 1}
	got, err := decodeIndex(x.encode())
	if err != nil || !maps.Equal(got.types, x.types) || got.common != x.common || got.environment != "dev" {
		t.Fatalf("decode(encode) = %+v, %v; want %+v", got, err, x)
	}
	old, err := decodeIndex(x.encodeKeys(false))
	if err != nil || old.types["east"].key != "" || old.types["east"].tree != x.types["east"].tree {
		t.Fatalf("an index without keys: %+v, %v", old, err)
	}
}

// FuzzState: whatever the state files hold, decoding them fails cleanly or gives entries
// that encode to a file decoding to the same entries.
func FuzzState(f *testing.F) {
	f.Add([]byte("shop-web 0123abcd shop\nshop-db 4567ef01 -\n"))
	f.Add([]byte("fleetform-state 2\nenvironment dev\ncommon abc\nct east 1111111111111111111111111111111111111111 3 5ecb\nct west 2222222222222222222222222222222222222222 1\n"))
	f.Add([]byte("a  b c\n"))
	f.Add([]byte("a b c d\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s, err := decodeShard("ct", data); err == nil {
			again, err := decodeShard("ct", s.encode())
			if err != nil || !maps.Equal(again, s) {
				t.Fatalf("shard %q: decode(encode) = %v, %v; want %v", data, again, err, s)
			}
			if !bytes.Equal(again.encode(), s.encode()) {
				t.Fatalf("shard %q: encoding is not stable", data)
			}
			checkRecorded(t, data, s)
		}
		if x, err := decodeIndex(data); err == nil {
			again, err := decodeIndex(x.encode())
			if err != nil || !maps.Equal(again.types, x.types) || again.environment != x.environment || again.common != x.common {
				t.Fatalf("index %q: decode(encode) = %+v, %v; want %+v", data, again, err, x)
			}
		}
	})
}

// checkRecorded: a shard read for the sorted targets it lists (as a cluster type's
// assignments are) answers as decodeShard does, by position or by name; its encoding, which
// lists exactly those targets in order, is read by position.
func checkRecorded(t *testing.T, data []byte, s shard) {
	t.Helper()
	as := assignedTo(slices.Sorted(maps.Keys(s))...)
	for _, d := range [][]byte{data, s.encode()} {
		var r recorded
		if err := r.setShard("ct", d, as); err != nil {
			t.Fatalf("shard %q: %v", d, err)
		}
		if !maps.Equal(r.shard(as), s) {
			t.Fatalf("shard %q: read for its targets %v, want %v", d, r.shard(as), s)
		}
		for i, a := range as {
			if e, ok := r.entry(i, a); !ok || e != s[a.DeploymentTarget] {
				t.Fatalf("shard %q: entry %d (%s) = %+v, %v; want %+v", d, i, a.DeploymentTarget, e, ok, s[a.DeploymentTarget])
			}
		}
	}
	var r recorded
	if err := r.setShard("ct", s.encode(), as); err != nil || (r.at == nil) != (len(as) == 0) {
		t.Fatalf("shard %q: its encoding is not read by position (%v)", data, err)
	}
}

// TestWorkloadKeys: workload keys decode as they were encoded, with the shard they were
// recorded with; a line that is not one is an error naming the file and line.
func TestWorkloadKeys(t *testing.T) {
	shard := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	keys := []render.WorkloadKey{{Workload: ""}, {Workload: "api", Assignments: 2}, {Workload: "web", Assignments: 1}}
	keys[1].Key[0], keys[2].Key[15] = 1, 2
	data := encodeWorkloadKeys(shard, keys, map[string]string{"": "t0", "api": "t1", "web": "t2"})
	gotShard, got, err := decodeWorkloadKeys("east", data)
	if err != nil {
		t.Fatal(err)
	}
	want := []workloadKey{{"", keys[0].String(), "t0"}, {"api", keys[1].String(), "t1"}, {"web", keys[2].String(), "t2"}}
	if gotShard != shard || !slices.Equal(got, want) {
		t.Errorf("decoded %s %v, want %s %v\n%s", gotShard, got, shard, want, data)
	}
	for _, bad := range []string{"", "shard x\n", "shard " + shard.String() + "\napi k\n", "shard " + shard.String() + "\napi k t extra\n"} {
		if _, _, err := decodeWorkloadKeys("east", []byte(bad)); err == nil || !strings.Contains(err.Error(), WorkloadsDir+"/east:") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}
