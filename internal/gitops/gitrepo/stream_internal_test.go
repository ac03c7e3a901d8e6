package gitrepo

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestStreamedPackIsOneValidPack: a commit whose objects are streamed into the temporary
// pack in many batches (its header patched and checksummed again at the end), with folders
// released from memory once written, is one pack git accepts, holding exactly the files
// written (its index listing every object, recorded in many blocks); a discarded tree leaves no temporary file.
func TestStreamedPackIsOneValidPack(t *testing.T) {
	defer func(n int) { batchBytes = n }(batchBytes)
	batchBytes = 1000 // a batch every few files
	defer func(n int) { entryBits = n }(entryBits)
	entryBits = 4 // the index's entries in many blocks of 16
	repo := gittest.NewBare(t).Checked(t)
	base := repo.Commit(t, "dev", map[string]string{"README.md": "notes", "old/x": "x"})
	r := openRepo(t, repo.Dir)
	tr := editAt(t, r, base)
	want := map[string]string{"README.md": "notes"}
	if _, err := tr.Remove("old"); err != nil {
		t.Fatal(err)
	}
	for ct := range 5 {
		for dt := range 40 {
			for _, f := range []string{"a.yaml", "b.yaml"} {
				p := fmt.Sprintf("ct%d/dt%d/%s", ct, dt, f)
				content := strings.Repeat(p+"\n", 1+dt%7) // some shared content, some not
				if dt%5 == 0 {
					content = "same\n"
				}
				if _, _, err := tr.SetFile(p, []byte(content)); err != nil {
					t.Fatal(err)
				}
				want[p] = content
			}
		}
		if _, err := tr.WriteDir(fmt.Sprintf("ct%d", ct)); err != nil {
			t.Fatal(err)
		}
		tr.Release(fmt.Sprintf("ct%d", ct))
	}
	sig := object.Signature{Name: "t", Email: "t@localhost", When: time.Unix(1700000000, 0).UTC()}
	commit, err := tr.Commit(base, "streamed\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	tr.Discard() // after the commit: nothing to drop
	if err := r.Publish(t.Context(), "dev", commit, base); err != nil {
		t.Fatal(err)
	}
	if got := repo.Files(t, "dev"); !maps.Equal(got, want) {
		t.Errorf("dev holds %d files, want %d", len(got), len(want))
	}
	packs, _ := filepath.Glob(filepath.Join(repo.Dir, "objects", "pack", "*.pack"))
	if len(packs) != 1 { // this commit's (the base is loose objects)
		t.Errorf("packs: %v, want one", packs)
	}

	// A tree edited and discarded after streaming leaves nothing behind.
	tr, err = r.Edit(commit)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, _, err := tr.SetFile(fmt.Sprintf("n/%d", i), []byte(strings.Repeat("discarded\n", i+50))); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(repo.Dir, "objects", TemporaryDir)
	if names := tmpPackFiles(t, tmp); len(names) == 0 {
		t.Fatal("nothing was streamed into a temporary pack")
	}
	tr.Discard()
	if names := tmpPackFiles(t, tmp); len(names) > 0 {
		t.Errorf("temporary files left: %v", names)
	}
}

func tmpPackFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if hasTmpPrefix(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestObjectReaderReadsDeltasAndLooseObjects: the tree reads what git wrote in every form:
// a repacked repository (offset deltas against other versions of the files), and loose
// objects written after it.
func TestObjectReaderReadsDeltasAndLooseObjects(t *testing.T) {
	repo := gittest.NewBare(t).Checked(t)
	files := map[string]string{}
	for v := range 4 {
		for i := range 20 {
			files[fmt.Sprintf("d%d/f%d.yaml", i%3, i)] = strings.Repeat(fmt.Sprintf("a line of file %d\n", i), 40) + fmt.Sprintf("version %d\n", v)
		}
		repo.Commit(t, "dev", files)
	}
	if out, err := exec.CommandContext(t.Context(), "git", "--git-dir", repo.Dir, "repack", "-a", "-d", "-f", "--depth=10", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git repack: %v\n%s", err, out)
	}
	packs, _ := filepath.Glob(filepath.Join(repo.Dir, "objects", "pack", "*.idx"))
	if out, err := exec.CommandContext(t.Context(), "git", "verify-pack", "-v", packs[0]).Output(); err != nil || !strings.Contains(string(out), "chain length") {
		t.Fatalf("the repacked pack has no deltas: %v\n%s", err, out)
	}
	files["loose.txt"] = "written after the repack\n"
	tip := repo.Commit(t, "dev", files)
	if out, _ := exec.CommandContext(t.Context(), "git", "--git-dir", repo.Dir, "count-objects", "-v").Output(); !strings.Contains(string(out), "count: ") {
		t.Fatalf("count-objects: %s", out)
	}
	r := openRepo(t, repo.Dir)
	readsBack(t, r, tip, files)
}

// TestCompareTreeNamesIsGitsOrder: entries sort as git sorts them, a folder as if its name
// ended with "/".
func TestCompareTreeNamesIsGitsOrder(t *testing.T) {
	names := []string{"a", "a-b", "a.txt", "a0", "a/", "ab", "b", "", "a\x00", "zz", "a-", "a.", "A"}
	sign := func(c int) int { return max(-1, min(1, c)) }
	for _, a := range names {
		for _, b := range names {
			for _, ad := range []bool{false, true} {
				for _, bd := range []bool{false, true} {
					want := sign(strings.Compare(sortName(a, ad), sortName(b, bd)))
					if got := sign(compareTreeNames(a, ad, b, bd)); got != want {
						t.Errorf("compare(%q dir=%v, %q dir=%v) = %d, want %d", a, ad, b, bd, got, want)
					}
				}
			}
		}
	}
}

// TestFolderOrderIsKept: a folder written again after names were added, removed, replaced
// or turned from files into folders lists its entries in git's order, as sorting them all
// does (the recorded order and the names added are merged).
func TestFolderOrderIsKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := []string{"a", "a.b", "a-b", "b", "ab", "a0", "z", "é", "a.yaml", "ax", "t1", "t10", "t2"}
	newEntry := func() *entry {
		if rng.IntN(3) == 0 {
			return &entry{mode: filemode.Dir}
		}
		return &entry{mode: filemode.Regular}
	}
	for round := range 500 {
		d := &dir{loaded: true, entries: map[string]*entry{}}
		for _, n := range names {
			if rng.IntN(2) == 0 {
				d.entries[n] = newEntry()
			}
		}
		d.encode() // records the order
		for range rng.IntN(6) {
			n := names[rng.IntN(len(names))]
			switch _, had := d.entries[n]; {
			case had && rng.IntN(2) == 0:
				delete(d.entries, n)
			case had:
				d.entries[n] = newEntry() // replaced in place, a folder perhaps
			default:
				d.entries[n] = newEntry()
				d.added = append(d.added, n)
			}
		}
		got := d.sorted()
		want := make([]namedEntry, 0, len(d.entries))
		for n, e := range d.entries {
			want = append(want, namedEntry{n, e})
		}
		slices.SortFunc(want, compareNamed)
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %v, want %v", round, got, want)
		}
	}
}
