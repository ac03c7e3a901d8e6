package gitrepo

import (
	"bufio"
	"bytes"
	"crypto/sha1" //nolint:gosec // git object names are SHA-1
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
	"github.com/klauspost/compress/zlib"
)

// pack collects git objects and writes them as one packfile with its index straight into
// a repository's object store. Writing a pack (instead of one loose file per object) is
// what makes a 300,000-file commit take seconds: objects are hashed as they are added and
// compressed in parallel when the pack is written.
type pack struct {
	mu      sync.Mutex
	objects []packObject
	seen    map[plumbing.Hash]bool
}

type packObject struct {
	typ     plumbing.ObjectType
	content []byte
	hash    plumbing.Hash
}

func newPack() *pack { return &pack{seen: map[plumbing.Hash]bool{}} }

// BlobHash is the git name of a blob with the content (the name SetFile gives it).
func BlobHash(content []byte) plumbing.Hash { return objectHash(plumbing.BlobObject, content) }

// objectHash is the git name of an object: SHA-1 of "<type> <size>\x00<content>".
func objectHash(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	h := sha1.New() //nolint:gosec // git object names are SHA-1
	writeObjectHeader(h, typ, len(content))
	h.Write(content)
	var out plumbing.Hash
	h.Sum(out[:0])
	return out
}

func writeObjectHeader(h hash.Hash, typ plumbing.ObjectType, size int) {
	var hdr [32]byte
	b := append(hdr[:0], typ.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(size), 10)
	b = append(b, 0)
	h.Write(b)
}

// add records an object (once) and returns its name. content must not change afterwards.
func (p *pack) add(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	h := objectHash(typ, content)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.seen[h] {
		p.seen[h] = true
		p.objects = append(p.objects, packObject{typ: typ, content: content, hash: h})
	}
	return h
}

// TemporaryDir is the folder (under objects/) where packs are written before they are
// renamed into objects/pack. Not objects/pack itself: go-git lists that folder with an
// lstat of every entry, and fails (losing track of every pack) when a temporary file is
// renamed away by a concurrent writer in between.
const TemporaryDir = "fleetform-tmp"

// write writes the pack and its index into objectsDir/pack and returns the pack's name.
// Both are written under temporary names, then the index is renamed in, then the pack:
// git finds packs by their index and skips an index whose pack is not there yet, and
// go-git finds them by the pack and needs its index, so a concurrent reader of either never
// sees half a pack. On failure the temporary files are removed; a writer killed before it
// finished leaves them, for a later write to remove (RemoveStaleTemporaryFiles).
func (p *pack) write(objectsDir string, logger *slog.Logger) (name string, err error) {
	if len(p.objects) == 0 {
		return "", nil
	}
	compressed, err := compressAll(p.objects)
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	dir, tmpDir := filepath.Join(objectsDir, "pack"), filepath.Join(objectsDir, TemporaryDir)
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // objects/pack: git's own mode for the folders of a repository
		return "", err
	}
	if err := os.MkdirAll(tmpDir, 0o755); err != nil { //nolint:gosec // a folder of objects/, git's own mode for it
		return "", err
	}
	unlock, err := lockTmpShared(tmpDir) // held until the temporary files are renamed or removed
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", tmpDir, err)
	}
	defer unlock()
	tmpPack, err := os.CreateTemp(tmpDir, tmpPrefixes[0])
	if err != nil {
		return "", err
	}
	defer func() { err = removeOnError(err, tmpPack.Name()) }()
	logger.Debug("writing pack", "file", tmpPack.Name(), "objects", len(p.objects))
	checksum, idx, err := p.encode(tmpPack, compressed)
	if cerr := tmpPack.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("write pack: %w", err)
	}
	name = "pack-" + checksum.String()
	tmpIdx, err := os.CreateTemp(tmpDir, tmpPrefixes[1])
	if err != nil {
		return "", err
	}
	defer func() { err = removeOnError(err, tmpIdx.Name()) }()
	if err := writeIndex(tmpIdx, idx); err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	idxFile := filepath.Join(dir, name+".idx")
	if err := os.Rename(tmpIdx.Name(), idxFile); err != nil {
		return "", err
	}
	if err := os.Rename(tmpPack.Name(), filepath.Join(dir, name+".pack")); err != nil {
		return "", removeOnError(err, idxFile)
	}
	return name, nil
}

// writeIndex writes a pack index into f and closes it.
func writeIndex(f *os.File, idx *idxfile.MemoryIndex) error {
	bw := bufio.NewWriter(f)
	_, err := idxfile.NewEncoder(bw).Encode(idx)
	if err == nil {
		err = bw.Flush()
	}
	return errors.Join(err, f.Close())
}

// removeOnError removes the file at path when err is set (a file already renamed away is
// not an error), and returns err with any failure to remove it.
func removeOnError(err error, path string) error {
	if err == nil {
		return nil
	}
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		return errors.Join(err, rerr)
	}
	return err
}

// encode writes the pack stream and builds its index.
func (p *pack) encode(f *os.File, compressed [][]byte) (plumbing.Hash, *idxfile.MemoryIndex, error) {
	sum := sha1.New() //nolint:gosec // the pack trailer is SHA-1
	w := bufio.NewWriterSize(f, 1<<20)
	out := func(b []byte) error {
		sum.Write(b)
		_, err := w.Write(b)
		return err
	}
	n := len(p.objects)
	if n > math.MaxUint32 { // the pack header and its index count objects in 32 bits
		return plumbing.ZeroHash, nil, fmt.Errorf("%d objects: more than a pack holds", n)
	}
	var header [12]byte
	copy(header[:], "PACK")
	binary.BigEndian.PutUint32(header[4:], 2)
	binary.BigEndian.PutUint32(header[8:], uint32(n))
	if err := out(header[:]); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	iw := new(idxfile.Writer)
	if err := iw.OnHeader(uint32(n)); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	offset := int64(len(header))
	var hdr [16]byte
	for i, o := range p.objects {
		h := entryHeader(hdr[:0], o.typ, len(o.content))
		crc := crc32.NewIEEE()
		crc.Write(h)
		crc.Write(compressed[i])
		if err := out(h); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		if err := out(compressed[i]); err != nil {
			return plumbing.ZeroHash, nil, err
		}
		iw.Add(o.hash, uint64(offset), crc.Sum32())
		offset += int64(len(h) + len(compressed[i]))
	}
	var checksum plumbing.Hash
	sum.Sum(checksum[:0])
	if _, err := w.Write(checksum[:]); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := w.Flush(); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	if err := iw.OnFooter(checksum); err != nil {
		return plumbing.ZeroHash, nil, err
	}
	idx, err := iw.Index()
	return checksum, idx, err
}

// entryHeader is a pack entry's type and size: 3 bits of type and 4 bits of size in the
// first byte, then 7 bits of size per byte, lowest first, high bit set while more follow.
func entryHeader(b []byte, typ plumbing.ObjectType, size int) []byte {
	c := byte(typ)<<4 | byte(size&0x0f) //nolint:gosec // typ is a commit, tree or blob (1 to 3): the objects this writer adds
	size >>= 4
	for size > 0 {
		b = append(b, c|0x80)
		c = byte(size & 0x7f)
		size >>= 7
	}
	return append(b, c)
}

// minCompressSize is the smallest object that is compressed: below it objects are stored.
// Building a deflate stream's Huffman tables costs about the same for 100 bytes as for
// 2 KiB, and small objects (trees of binary hashes, short manifests) barely shrink: on the
// 100,000-assignment fleet, storing the objects under 512 bytes makes a cold apply 1.2 s
// faster for a 12% larger pack (147 MB instead of 131 MB; git gc compacts it later).
const minCompressSize = 512

// compressAll zlib-compresses the objects' contents on all cores (best speed), storing
// the small ones.
func compressAll(objects []packObject) ([][]byte, error) {
	out := make([][]byte, len(objects))
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	chunk := (len(objects) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(objects))
		if lo >= hi {
			break
		}
		wg.Go(func() { errs[w] = compressRange(objects[lo:hi], out[lo:hi]) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// compressRange compresses objects into out (same length).
func compressRange(objects []packObject, out [][]byte) error {
	var buf bytes.Buffer
	fast, err := zlib.NewWriterLevel(&buf, zlib.BestSpeed)
	if err != nil {
		return err
	}
	stored, err := zlib.NewWriterLevel(&buf, zlib.NoCompression)
	if err != nil {
		return err
	}
	for i, o := range objects {
		buf.Reset()
		zw := fast
		if len(o.content) < minCompressSize {
			zw = stored
		}
		zw.Reset(&buf)
		if _, err := zw.Write(o.content); err != nil {
			return fmt.Errorf("compress %s: %w", o.hash, err)
		}
		if err := zw.Close(); err != nil {
			return fmt.Errorf("compress %s: %w", o.hash, err)
		}
		out[i] = bytes.Clone(buf.Bytes())
	}
	return nil
}
