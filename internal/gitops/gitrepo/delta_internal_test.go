package gitrepo

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestAlikeFilesAreWrittenAsDeltas: the same file of many deployment-target folders is
// written as deltas of one blob of that name written whole, a new base every
// deltaBaseUses deltas, never a delta of a delta; a file unlike the one before it, and a
// tiny one, are written whole. git reads every file back (fsck --strict, the files of the
// branch), and so do go-git and fleetform's own reader.
func TestAlikeFilesAreWrittenAsDeltas(t *testing.T) {
	defer func(n int) { batchBytes = n }(batchBytes)
	batchBytes = 4000 // deltas whose base went out in an earlier batch
	repo := gittest.NewBare(t).Checked(t)
	base := repo.Commit(t, "dev", map[string]string{"README.md": "notes"})
	r := openRepo(t, repo.Dir)
	tr := editAt(t, r, base)
	rng := rand.New(rand.NewPCG(1, 2))
	want := map[string]string{"README.md": "notes"}
	const folders = 2*deltaBaseUses + 100 // three bases of config.yaml
	for i := range folders {
		dir := fmt.Sprintf("ct/target-%04d", i)
		files := []File{
			{Name: "config.yaml", Content: []byte(alikeConfig(i))},
			{Name: "random.bin", Content: randomBytes(rng, 300)},
			{Name: "tiny", Content: []byte(strconv.Itoa(i))},
		}
		if err := tr.SetFiles(dir, files, make([]FileChange, len(files))); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			want[dir+"/"+f.Name] = string(f.Content)
		}
	}
	sig := object.Signature{Name: "t", Email: "t@localhost", When: time.Unix(1700000000, 0).UTC()}
	commit, err := tr.Commit(base, "deltas\n", sig)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(t.Context(), "dev", commit, base); err != nil {
		t.Fatal(err)
	}
	if got := repo.Files(t, "dev"); !maps.Equal(got, want) {
		t.Fatalf("dev holds %d files, want %d (or other contents)", len(got), len(want))
	}

	deltas, bases := verifyPack(t, repo.Dir)
	byName := map[string]int{}
	for _, p := range deltas {
		byName[path.Base(p)]++
	}
	if byName["config.yaml"] != folders-3 || byName["random.bin"] != 0 || byName["tiny"] != 0 {
		t.Errorf("deltas by file name: %v, want %d of config.yaml (all but 3 bases) and no other", byName, folders-3)
	}
	for p, b := range bases {
		if _, isDelta := deltas[b]; isDelta {
			t.Errorf("%s is a delta of %s, itself a delta", p, b)
		}
	}

	// go-git (the git library Flux's source-controller reads repositories with) reads them.
	gg, err := git.PlainOpen(repo.Dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gg.CommitObject(commit)
	if err != nil {
		t.Fatal(err)
	}
	iter, err := c.Files()
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	if err := iter.ForEach(func(f *object.File) error {
		got, err := f.Contents()
		if err != nil || got != want[f.Name] {
			t.Errorf("go-git reads %s as %q (%v), want %q", f.Name, got, err, want[f.Name])
		}
		read++
		return nil
	}); err != nil || read != len(want) {
		t.Fatalf("go-git read %d files (%v), want %d", read, err, len(want))
	}

	readsBack(t, r, commit, want) // and so does fleetform
}

// openRepo opens the repository at dir, with a cache of its own and no log.
func openRepo(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(t.Context(), dir, t.TempDir(), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// editAt opens the tree of commit tip for editing.
func editAt(t *testing.T, r *Repo, tip plumbing.Hash) *Tree {
	t.Helper()
	tr, err := r.Edit(tip)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// readsBack checks that fleetform's reader reads the files of commit back as files has them.
func readsBack(t *testing.T, r *Repo, commit plumbing.Hash, files map[string]string) {
	t.Helper()
	tr := editAt(t, r, commit)
	defer tr.Discard()
	for p, want := range files {
		h, ok, err := tr.File(p)
		if err != nil || !ok {
			t.Fatalf("%s: %v, %v", p, ok, err)
		}
		got, err := tr.Blob(h)
		if err != nil || string(got) != want {
			t.Errorf("%s reads back as %q (%v), want %q", p, got, err, want)
		}
	}
}

// alikeConfig is the config of target i: the same lines with the target's name in them.
func alikeConfig(i int) string {
	return fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform-config\n  namespace: dev-east-target-%04d\n"+
		"data:\n  CLUSTER_NAME: east\n  DATABASE_URL: postgres://db.east.internal:5432/fleet\n  LOG_LEVEL: info\n  TARGET: t%04d\n", i, i)
}

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// verifyPack runs git verify-pack on the repository's packs and returns the blobs stored
// as deltas (by name, the path of each in the dev branch) and, for each, its base's name.
func verifyPack(t *testing.T, gitDir string) (deltas map[plumbing.Hash]string, bases map[string]plumbing.Hash) {
	t.Helper()
	paths := map[plumbing.Hash]string{}
	out, err := exec.CommandContext(t.Context(), "git", "--git-dir", gitDir, "ls-tree", "-r", "dev").Output()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(out)) {
		meta, p, _ := strings.Cut(strings.TrimSpace(line), "\t")
		f := strings.Fields(meta)
		paths[plumbing.NewHash(f[2])] = p
	}
	idx, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.idx"))
	deltas, bases = map[plumbing.Hash]string{}, map[string]plumbing.Hash{}
	for _, file := range idx {
		out, err := exec.CommandContext(t.Context(), "git", "verify-pack", "-v", file).Output()
		if err != nil {
			t.Fatalf("git verify-pack %s: %v", file, err)
		}
		for line := range strings.Lines(string(out)) {
			f := strings.Fields(line)
			if len(f) != 7 || f[1] != "blob" { // <name> blob <size> <in pack> <offset> <depth> <base>
				continue
			}
			if f[5] != "1" {
				t.Errorf("%s: delta chain of %s, want 1", paths[plumbing.NewHash(f[0])], f[5])
			}
			h := plumbing.NewHash(f[0])
			deltas[h] = paths[h]
			bases[paths[h]] = plumbing.NewHash(f[6])
		}
	}
	return deltas, bases
}

// TestDeltaOfRenderedFiles: files rendered from one template for two deployment targets
// (from a generated fleet) make deltas of a few bytes per line that differs.
func TestDeltaOfRenderedFiles(t *testing.T) {
	base := newDeltaBase([]byte(alikeConfig(30)), 0)
	for _, c := range []struct {
		content string
		max     int
	}{
		{alikeConfig(31), 24},  // two lines differ in one character each
		{alikeConfig(530), 28}, // in two characters
		{"apiVersion: v1\nkind: Secret\n", 20},
		{strings.ReplaceAll(alikeConfig(30), "east", "westeurope"), 60},
	} {
		d, ok := encodeDelta(base, []byte(c.content), &deltaScratch{})
		if !ok || len(d) > c.max {
			t.Errorf("delta of %d bytes (worth it: %v), want at most %d, for:\n%s", len(d), ok, c.max, c.content)
		}
	}
	if d, ok := encodeDelta(base, randomBytes(rand.New(rand.NewPCG(3, 4)), 300), &deltaScratch{}); ok {
		t.Errorf("a delta of %d bytes for random content, want none", len(d))
	}
}

// TestLongCopiesAreSplit: a copy longer than an instruction holds (0xffff bytes) is
// written as several, and reads back.
func TestLongCopiesAreSplit(t *testing.T) {
	base := []byte(strings.Repeat("0123456789abcdef", 10000) + "\n")
	content := append(append([]byte{}, base...), "and more\n"...)
	d, ok := encodeDelta(newDeltaBase(base, 0), content, &deltaScratch{})
	if !ok || len(d) > 40 {
		t.Fatalf("a delta of %d bytes (worth it: %v), want a few copies", len(d), ok)
	}
	if back, err := applyDelta(base, d); err != nil || !bytes.Equal(back, content) {
		t.Fatalf("reads back as %d bytes (%v)", len(back), err)
	}
}

// FuzzDelta: whatever the base and the content, the delta made reads back as the content.
func FuzzDelta(f *testing.F) {
	f.Add([]byte(alikeConfig(1)), []byte(alikeConfig(2)))
	f.Add([]byte("a\nb\nc\n"), []byte("c\nb\na\nb\nc"))
	f.Add([]byte(""), []byte("x\n"))
	f.Fuzz(func(t *testing.T, base, content []byte) {
		e := deltaEncoder{base: newDeltaBase(base, 0)} // every delta, worth storing or not
		d := e.delta(content)
		back, err := applyDelta(base, d)
		if err != nil || !bytes.Equal(back, content) {
			t.Fatalf("the delta reads back as %q (%v), want %q", back, err, content)
		}
	})
}
