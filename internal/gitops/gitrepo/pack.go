package gitrepo

import (
	"bufio"
	"crypto/sha1" //nolint:gosec // git object names are SHA-1
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/klauspost/compress/zlib"
)

// pack collects git objects and writes them as one packfile with its index straight into
// a repository's object store. Writing a pack (instead of one loose file per object) is
// what makes a 300,000-file commit take seconds: objects are hashed as they are added and
// compressed in parallel.
//
// The pack is streamed: objects are kept in memory only until batchBytes of them are
// waiting, then compressed and appended to a temporary pack file, so memory does not grow
// with the size of the commit (a million-assignment cold apply writes 1.5 GB of objects).
// What stays in memory is one index entry per object. A pack whose objects all fit in one
// batch is written once, with its header; a longer one is written with a provisional
// header, patched and checksummed again when it is finished, as git fast-import does.
type pack struct {
	mu     sync.Mutex
	namers sync.Pool // of *namer: a pack names millions of objects
	// objects are the objects added, once each, with their index entries.
	objects objectIndex
	// arenas hold the compressed contents of a batch, one per core, reused batch after batch.
	arenas  [][]byte
	batch   []packObject
	pending int // bytes of content in batch
	// bases are the blobs later blobs of the same file name are written as deltas of.
	bases deltaBases
	// dry packs only name objects (a plan that is not applied): nothing is kept or written.
	dry bool
	// objectsDir is the repository's objects folder (streaming starts there).
	objectsDir string
	logger     *slog.Logger
	out        *packFile // nil until the first batch is written
	err        error     // the first failure to write a batch: Commit returns it
}

type packObject struct {
	typ     plumbing.ObjectType
	content []byte
	pos     int // in pack.objects
	// base, when set, is an earlier blob of the pack to write this one as a delta of.
	base *deltaBase
}

// batchBytes is how much object content a pack holds in memory before compressing it
// into its temporary file.
var batchBytes = 32 << 20 // a variable for the tests

func newPack(objectsDir string, logger *slog.Logger) *pack {
	return &pack{objectsDir: objectsDir, logger: logger}
}

// BlobHash is the git name of a blob with the content (the name SetFile gives it).
func BlobHash(content []byte) plumbing.Hash { return objectHash(plumbing.BlobObject, content) }

// objectHash is the git name of an object: SHA-1 of "<type> <size>\x00<content>".
func objectHash(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	return newNamer().name(typ, content)
}

// namer names objects with one SHA-1 hasher and a buffer for the header, both reused.
type namer struct {
	h   hash.Hash
	hdr [32]byte
}

func newNamer() *namer { return &namer{h: sha1.New()} } //nolint:gosec // git object names are SHA-1

// name is the git name of an object: SHA-1 of "<type> <size>\x00<content>".
func (n *namer) name(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	n.h.Reset()
	b := append(n.hdr[:0], typ.String()...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(content)), 10)
	b = append(b, 0)
	n.h.Write(b)
	n.h.Write(content)
	var out plumbing.Hash
	n.h.Sum(out[:0])
	return out
}

// name is the git name of an object, made with a namer of the pack's.
func (p *pack) name(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	n, _ := p.namers.Get().(*namer)
	if n == nil {
		n = newNamer()
	}
	h := n.name(typ, content)
	p.namers.Put(n)
	return h
}

// add records an object (once) and returns its name. content must not change afterwards.
// When enough content is waiting, it is compressed and written to the temporary pack (a
// failure to do so is returned by write).
func (p *pack) add(typ plumbing.ObjectType, content []byte) plumbing.Hash {
	h := p.name(typ, content)
	p.addNamed(typ, content, h)
	return h
}

// addNamed is add of an object already named h.
func (p *pack) addNamed(typ plumbing.ObjectType, content []byte, h plumbing.Hash) {
	p.addLike(typ, content, h, "")
}

// addLike is addNamed of the content of a file called name ("": none), written as a delta
// of the last blob added for that name when the two are alike (deltaBases).
func (p *pack) addLike(typ plumbing.ObjectType, content []byte, h plumbing.Hash, name string) {
	if p.dry {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pos, added := p.objects.add(h)
	if pos < 0 {
		if p.err == nil {
			p.err = fmt.Errorf("write pack: more than %d objects, more than a pack holds", maxObjects)
		}
		return
	}
	if !added {
		return
	}
	o := packObject{typ: typ, content: content, pos: pos}
	if name != "" && typ == plumbing.BlobObject {
		o.base = p.bases.baseFor(name, content, pos)
	}
	p.batch = append(p.batch, o)
	p.pending += len(content)
	if p.pending >= batchBytes && p.err == nil {
		p.err = p.flush(false)
	}
}

// TemporaryDir is the folder (under objects/) where packs are written before they are
// renamed into objects/pack. Not objects/pack itself: go-git lists that folder with an
// lstat of every entry, and fails (losing track of every pack) when a temporary file is
// renamed away by a concurrent writer in between.
const TemporaryDir = "fleetform-tmp"

// packFile is a pack being written into a temporary file.
type packFile struct {
	f      *os.File
	w      *bufio.Writer
	sum    hash.Hash // the running checksum; nil when the header is patched at the end
	count  uint32    // the object count in the header written
	offset int64
	n      int // objects written
	unlock func()
}

// reserve makes room for n objects in all (a hint: a pack holds any number).
func (p *pack) reserve(n int) {
	if p.dry {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.objects.reserve(n)
}

// flush compresses the waiting objects and appends them to the temporary pack, creating it
// first. final says no object follows: a pack written in one go gets its count right away.
func (p *pack) flush(final bool) error {
	if len(p.batch) == 0 && p.out != nil {
		return nil
	}
	if p.out == nil {
		count := uint32(0)
		if final {
			if len(p.batch) > math.MaxUint32 { // the pack header and its index count objects in 32 bits
				return fmt.Errorf("%d objects: more than a pack holds", len(p.batch))
			}
			count = uint32(len(p.batch)) //nolint:gosec // checked above
		}
		out, err := createPackFile(p.objectsDir, count, final)
		if err != nil {
			return err
		}
		p.out = out
		p.logger.Debug("writing pack", "file", out.f.Name())
	}
	compressed, err := compressAll(p.batch, &p.arenas)
	if err != nil {
		return fmt.Errorf("write pack: %w", err)
	}
	for i, o := range p.batch {
		e := p.objects.at(o.pos)
		var err error
		var baseOffset uint64
		if compressed[i].deltaSize > 0 {
			baseOffset = p.objects.at(o.base.pos).offset // written before: added before
		}
		if e.crc, e.offset, err = p.out.add(o, compressed[i], baseOffset); err != nil {
			return fmt.Errorf("write pack: %w", err)
		}
		compressed[i] = compressedObject{}
	}
	clear(p.batch)
	p.batch, p.pending = p.batch[:0], 0
	return nil
}

// createPackFile creates a temporary pack (holding the writers' lock shared until it is
// renamed or removed) and writes its header.
func createPackFile(objectsDir string, count uint32, final bool) (out *packFile, err error) {
	tmpDir := filepath.Join(objectsDir, TemporaryDir)
	if err := os.MkdirAll(tmpDir, 0o755); err != nil { //nolint:gosec // a folder of objects/, git's own mode for it
		return nil, err
	}
	unlock, err := lockTmpShared(tmpDir) // held until the temporary files are renamed or removed
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", tmpDir, err)
	}
	f, err := os.CreateTemp(tmpDir, tmpPrefixes[0])
	if err != nil {
		unlock()
		return nil, err
	}
	out = &packFile{f: f, w: bufio.NewWriterSize(f, 1<<20), count: count, unlock: unlock}
	if final {
		out.sum = sha1.New() //nolint:gosec // the pack trailer is SHA-1
	}
	var header [12]byte
	copy(header[:], "PACK")
	binary.BigEndian.PutUint32(header[4:], 2)
	binary.BigEndian.PutUint32(header[8:], count)
	if err := out.write(header[:]); err != nil {
		out.discard()
		return nil, err
	}
	return out, nil
}

func (o *packFile) write(b []byte) error {
	if o.sum != nil {
		o.sum.Write(b)
	}
	_, err := o.w.Write(b)
	o.offset += int64(len(b))
	return err
}

// add appends one object (its compressed content, or its compressed delta of the entry at
// baseOffset) and returns its index entry's checksum and offset.
func (o *packFile) add(obj packObject, c compressedObject, baseOffset uint64) (crc uint32, offset uint64, err error) {
	var hdr [32]byte
	offset = uint64(o.offset) //nolint:gosec // an offset is never negative
	var h []byte
	if c.deltaSize > 0 {
		h = ofsDeltaOffset(entryHeader(hdr[:0], plumbing.OFSDeltaObject, c.deltaSize), offset-baseOffset)
	} else {
		h = entryHeader(hdr[:0], obj.typ, len(obj.content))
	}
	crc = crc32.Update(crc32.ChecksumIEEE(h), crc32.IEEETable, c.data)
	if err := o.write(h); err != nil {
		return 0, 0, err
	}
	if err := o.write(c.data); err != nil {
		return 0, 0, err
	}
	o.n++
	return crc, offset, nil
}

// discard removes the temporary pack and releases the lock.
func (o *packFile) discard() {
	_ = o.f.Close()
	if err := os.Remove(o.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		_ = err // a leftover is removed by a later write (RemoveStaleTemporaryFiles)
	}
	o.unlock()
}

// finish completes the pack: the object count in its header (read back and checksummed
// again when it was written in several batches) and its trailer. It returns the checksum.
func (o *packFile) finish() (plumbing.Hash, error) {
	if err := o.w.Flush(); err != nil {
		return plumbing.ZeroHash, err
	}
	n := o.n
	if n > math.MaxUint32 {
		return plumbing.ZeroHash, fmt.Errorf("%d objects: more than a pack holds", n)
	}
	count32 := uint32(n) //nolint:gosec // checked above
	if o.sum == nil || o.count != count32 {
		var count [4]byte
		binary.BigEndian.PutUint32(count[:], count32)
		if _, err := o.f.WriteAt(count[:], 8); err != nil {
			return plumbing.ZeroHash, err
		}
		o.sum = sha1.New() //nolint:gosec // the pack trailer is SHA-1
		if _, err := io.Copy(o.sum, io.NewSectionReader(o.f, 0, o.offset)); err != nil {
			return plumbing.ZeroHash, fmt.Errorf("checksum the pack: %w", err)
		}
	}
	var checksum plumbing.Hash
	o.sum.Sum(checksum[:0])
	if _, err := o.f.WriteAt(checksum[:], o.offset); err != nil {
		return plumbing.ZeroHash, err
	}
	return checksum, o.f.Close()
}

// write finishes the pack and its index and moves them into objectsDir/pack, and returns
// the pack's name ("" when there is no object). Both are written under temporary names,
// then the index is renamed in, then the pack: git finds packs by their index and skips an
// index whose pack is not there yet, and go-git finds them by the pack and needs its index,
// so a concurrent reader of either never sees half a pack. On failure the temporary files
// are removed; a writer killed before it finished leaves them, for a later write to remove
// (RemoveStaleTemporaryFiles).
func (p *pack) write() (name string, err error) {
	if p.err != nil {
		p.discard()
		return "", p.err
	}
	if p.dry {
		return "", errors.New("write pack: the tree was opened for planning only")
	}
	if len(p.batch) == 0 && p.out == nil {
		return "", nil
	}
	if err := p.flush(true); err != nil {
		p.discard()
		return "", err
	}
	out := p.out
	p.out, p.bases = nil, nil // a delta's base is in the same pack file: none in the next one
	defer out.unlock()
	tmpPack := out.f.Name()
	defer func() { err = removeOnError(err, tmpPack) }()
	// The pack is checksummed (read back when it was written in batches) while its index
	// is sorted: both take a second for a million-assignment commit.
	var checksum plumbing.Hash
	done := make(chan error, 1)
	go func() {
		var err error
		checksum, err = out.finish()
		done <- err
	}()
	entries := p.objects.sorted()
	if err := <-done; err != nil {
		_ = out.f.Close()
		return "", fmt.Errorf("write pack: %w", err)
	}
	dir := filepath.Join(p.objectsDir, "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil { //nolint:gosec // objects/pack: git's own mode for the folders of a repository
		return "", err
	}
	name = "pack-" + checksum.String()
	tmpIdx, err := os.CreateTemp(filepath.Dir(tmpPack), tmpPrefixes[1])
	if err != nil {
		return "", err
	}
	defer func() { err = removeOnError(err, tmpIdx.Name()) }()
	if err := writeIndex(tmpIdx, entries, checksum); err != nil {
		return "", fmt.Errorf("write pack index: %w", err)
	}
	idxFile := filepath.Join(dir, name+".idx")
	if err := os.Rename(tmpIdx.Name(), idxFile); err != nil {
		return "", err
	}
	if err := os.Rename(tmpPack, filepath.Join(dir, name+".pack")); err != nil {
		return "", removeOnError(err, idxFile)
	}
	return name, nil
}

// discard drops what the pack holds and removes its temporary file, if any.
func (p *pack) discard() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.batch)
	p.batch, p.pending = nil, 0
	if p.out != nil {
		p.out.discard()
		p.out = nil
	}
	p.bases = nil
}

// writeIndex writes a version 2 pack index of entries (sorted by name) into f and closes it.
func writeIndex(f *os.File, entries []idxEntry, packChecksum plumbing.Hash) error {
	sum := sha1.New() //nolint:gosec // the index trailer is SHA-1
	bw := bufio.NewWriterSize(io.MultiWriter(f, sum), 1<<20)
	var b [8]byte
	put32 := func(v uint32) {
		binary.BigEndian.PutUint32(b[:4], v)
		_, _ = bw.Write(b[:4])
	}
	_, _ = bw.Write([]byte{0xff, 't', 'O', 'c'})
	put32(2)
	var fanout [256]uint32
	for _, e := range entries {
		fanout[e.hash[0]]++
	}
	total := uint32(0)
	for _, c := range fanout {
		total += c
		put32(total)
	}
	for _, e := range entries {
		_, _ = bw.Write(e.hash[:])
	}
	for _, e := range entries {
		put32(e.crc)
	}
	var large []uint64
	for _, e := range entries {
		if e.offset < 1<<31 {
			put32(uint32(e.offset))
			continue
		}
		put32(uint32(1<<31 | len(large))) //nolint:gosec // fewer large offsets than objects, which fit in 32 bits
		large = append(large, e.offset)
	}
	for _, o := range large {
		binary.BigEndian.PutUint64(b[:], o)
		_, _ = bw.Write(b[:])
	}
	_, _ = bw.Write(packChecksum[:])
	err := bw.Flush()
	if err == nil {
		_, err = f.Write(sum.Sum(nil))
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

// entryHeader is a pack entry's type and size: 3 bits of type and 4 bits of size in the
// first byte, then 7 bits of size per byte, lowest first, high bit set while more follow.
func entryHeader(b []byte, typ plumbing.ObjectType, size int) []byte {
	c := byte(typ)<<4 | byte(size&0x0f) //nolint:gosec // typ is a commit, tree, blob or OFS_DELTA (1 to 3, 6): the entries this writer writes
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
// 2 KiB, and small objects (trees of binary hashes, short manifests) barely shrink: storing
// them trades a slightly larger pack (which git gc compacts later) for a faster cold apply.
const minCompressSize = 512

// compressedObject is an object's entry data as compressAll made it: its content, or its
// delta of its base when deltaSize (the delta's size before compression) is set.
type compressedObject struct {
	data      []byte
	deltaSize int
}

// compressAll zlib-compresses the objects' contents on all cores (best speed), storing
// the small ones; an object with a base is compressed as its delta when that is worth it.
// The results are slices of *arenas (one per core, grown as needed), valid until the next
// call with the same arenas.
func compressAll(objects []packObject, arenas *[][]byte) ([]compressedObject, error) {
	out := make([]compressedObject, len(objects))
	workers := runtime.GOMAXPROCS(0)
	if len(*arenas) < workers {
		*arenas = append(*arenas, make([][]byte, workers-len(*arenas))...)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	chunk := (len(objects) + workers - 1) / workers
	for w := range workers {
		lo, hi := w*chunk, min((w+1)*chunk, len(objects))
		if lo >= hi {
			break
		}
		wg.Go(func() { (*arenas)[w], errs[w] = compressRange(objects[lo:hi], out[lo:hi], (*arenas)[w][:0]) })
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// appender is an io.Writer that appends to a byte slice.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// compressRange compresses objects into out (same length), each a slice of arena, which
// it returns (grown, the compressed contents one after another).
func compressRange(objects []packObject, out []compressedObject, arena []byte) ([]byte, error) {
	buf := &appender{b: arena}
	fast, err := zlib.NewWriterLevel(buf, zlib.BestSpeed)
	if err != nil {
		return arena, err
	}
	stored, err := zlib.NewWriterLevel(buf, zlib.NoCompression)
	if err != nil {
		return arena, err
	}
	ends := make([]int, len(objects))
	var scratch deltaScratch
	for i, o := range objects {
		data := o.content
		if o.base != nil {
			if d, ok := encodeDelta(o.base, o.content, &scratch); ok {
				data, out[i].deltaSize = d, len(d)
			}
		}
		zw := fast
		if len(data) < minCompressSize {
			zw = stored
		}
		zw.Reset(buf)
		if _, err := zw.Write(data); err != nil {
			return buf.b, fmt.Errorf("compress a %s of %d bytes: %w", o.typ, len(o.content), err)
		}
		if err := zw.Close(); err != nil {
			return buf.b, fmt.Errorf("compress a %s of %d bytes: %w", o.typ, len(o.content), err)
		}
		ends[i] = len(buf.b)
	}
	start := 0
	for i, end := range ends {
		out[i].data = buf.b[start:end:end]
		start = end
	}
	return buf.b, nil
}
