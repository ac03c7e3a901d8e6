package gitrepo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/klauspost/compress/zlib"
)

// objectReader reads objects from a repository's packs and loose objects without loading
// whole pack indexes: it looks an object up by a binary search in each pack's index file
// (read where needed), and reads and inflates only that object (and its delta bases).
// go-git, by contrast, reads every index into memory and builds a reverse map of every
// object of a pack on its first read: for a million-assignment fleet's 4 million objects
// that alone took seconds and hundreds of MB on every apply, even one with nothing to do.
// Objects it cannot find (in alternates, say) are read through go-git (fallback).
type objectReader struct {
	dir          string // objects/
	packs        []*packReader
	fallbackOpen func() (storer.EncodedObjectStorer, error)

	mu       sync.Mutex
	fallback storer.EncodedObjectStorer
}

// packReader is one pack and its index (version 2), read with ReadAt.
type packReader struct {
	idx, pack *os.File
	fanout    [256]uint32
}

// maxDeltaDepth bounds a chain of deltas (git's default is 50).
const maxDeltaDepth = 10000

func openObjectReader(objectsDir string, fallback func() (storer.EncodedObjectStorer, error)) (*objectReader, error) {
	r := &objectReader{dir: objectsDir, fallbackOpen: fallback}
	entries, err := os.ReadDir(filepath.Join(objectsDir, "pack"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") {
			continue
		}
		p, err := openPackReader(filepath.Join(objectsDir, "pack", name))
		if err != nil {
			continue // a pack being written or removed: go-git is asked when an object is missing
		}
		r.packs = append(r.packs, p)
	}
	return r, nil
}

func openPackReader(base string) (*packReader, error) {
	idx, err := os.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	var head [8 + 256*4]byte
	if _, err := idx.ReadAt(head[:], 0); err != nil || !bytes.Equal(head[:4], []byte{0xff, 't', 'O', 'c'}) ||
		binary.BigEndian.Uint32(head[4:8]) != 2 {
		_ = idx.Close()
		return nil, fmt.Errorf("%s.idx: not a version 2 pack index", base)
	}
	pack, err := os.Open(base + ".pack")
	if err != nil {
		_ = idx.Close()
		return nil, err
	}
	p := &packReader{idx: idx, pack: pack}
	for i := range p.fanout {
		p.fanout[i] = binary.BigEndian.Uint32(head[8+4*i:])
	}
	return p, nil
}

// Close closes every pack.
func (r *objectReader) Close() {
	for _, p := range r.packs {
		_ = p.idx.Close()
		_ = p.pack.Close()
	}
	r.packs = nil
}

// find returns the offset of h in the pack, if it is there.
func (p *packReader) find(h plumbing.Hash) (int64, bool, error) {
	lo := uint32(0)
	if h[0] > 0 {
		lo = p.fanout[h[0]-1]
	}
	hi, n := p.fanout[h[0]], p.fanout[255]
	var name plumbing.Hash
	const namesAt = 8 + 256*4
	for lo < hi {
		mid := lo + (hi-lo)/2
		if _, err := p.idx.ReadAt(name[:], namesAt+int64(mid)*20); err != nil {
			return 0, false, err
		}
		switch c := bytes.Compare(name[:], h[:]); {
		case c < 0:
			lo = mid + 1
		case c > 0:
			hi = mid
		default:
			var b [8]byte
			offsetsAt := namesAt + int64(n)*24
			if _, err := p.idx.ReadAt(b[:4], offsetsAt+int64(mid)*4); err != nil {
				return 0, false, err
			}
			off := binary.BigEndian.Uint32(b[:4])
			if off&(1<<31) == 0 {
				return int64(off), true, nil
			}
			if _, err := p.idx.ReadAt(b[:], offsetsAt+int64(n)*4+int64(off&^(1<<31))*8); err != nil {
				return 0, false, err
			}
			return int64(binary.BigEndian.Uint64(b[:])), true, nil //nolint:gosec // a pack offset
		}
	}
	return 0, false, nil
}

// read returns the type and content of object h.
func (r *objectReader) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	typ, data, ok, err := r.readPacked(h, 0)
	if err != nil || ok {
		return typ, data, err
	}
	if typ, data, ok, err = r.readLoose(h); err != nil || ok {
		return typ, data, err
	}
	return r.readFallback(h)
}

func (r *objectReader) readPacked(h plumbing.Hash, depth int) (plumbing.ObjectType, []byte, bool, error) {
	for _, p := range r.packs {
		off, ok, err := p.find(h)
		if err != nil {
			return 0, nil, false, err
		}
		if ok {
			typ, data, err := r.readAt(p, off, depth)
			return typ, data, err == nil, err
		}
	}
	return 0, nil, false, nil
}

// readAt reads the object at offset off of pack p, resolving deltas.
func (r *objectReader) readAt(p *packReader, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if depth > maxDeltaDepth {
		return 0, nil, errors.New("delta chain too long")
	}
	br := bufioPool.Get().(*bufio.Reader)
	defer bufioPool.Put(br)
	br.Reset(io.NewSectionReader(p.pack, off, 1<<62))
	typ, size, err := readEntryHeader(br)
	if err != nil {
		return 0, nil, err
	}
	var baseType plumbing.ObjectType
	var base []byte
	switch typ {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject, plumbing.REFDeltaObject:
		if baseType, base, err = r.deltaBase(p, br, typ, off, depth); err != nil {
			return 0, nil, err
		}
	default:
		return 0, nil, fmt.Errorf("pack entry of type %d at %d", typ, off)
	}
	if size > 1<<32 {
		return 0, nil, fmt.Errorf("object of %d bytes at %d: too large", size, off)
	}
	data, err := inflate(br, size)
	if err != nil {
		return 0, nil, err
	}
	if baseType == 0 {
		return typ, data, nil
	}
	out, err := applyDelta(base, data)
	return baseType, out, err
}

// bufioPool and zlibPool keep the readers of objects: a zlib reader's state is tens of KB,
// and a change to one cluster type reads thousands of small trees.
var (
	bufioPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 4096) }}
	zlibPool  sync.Pool
)

// inflate reads size bytes of zlib-compressed data from r.
func inflate(r io.Reader, size uint64) ([]byte, error) {
	var zr io.ReadCloser
	if pooled, ok := zlibPool.Get().(io.ReadCloser); ok {
		if err := pooled.(zlib.Resetter).Reset(r, nil); err != nil {
			return nil, err
		}
		zr = pooled
	} else {
		var err error
		if zr, err = zlib.NewReader(r); err != nil {
			return nil, err
		}
	}
	defer zlibPool.Put(zr)
	data := make([]byte, size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, err
	}
	return data, nil
}

// readEntryHeader reads a pack entry's type and size.
func readEntryHeader(br *bufio.Reader) (plumbing.ObjectType, uint64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ := plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 0x0f)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if c, err = br.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= uint64(c&0x7f) << shift
	}
	return typ, size, nil
}

// deltaBase reads the base of the delta at off (whose header br has read).
func (r *objectReader) deltaBase(p *packReader, br *bufio.Reader, typ plumbing.ObjectType, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	if typ == plumbing.OFSDeltaObject {
		c, err := br.ReadByte()
		if err != nil {
			return 0, nil, err
		}
		rel := int64(c & 0x7f)
		for c&0x80 != 0 {
			if c, err = br.ReadByte(); err != nil {
				return 0, nil, err
			}
			rel = (rel+1)<<7 | int64(c&0x7f)
		}
		return r.readAt(p, off-rel, depth+1)
	}
	var bh plumbing.Hash
	if _, err := io.ReadFull(br, bh[:]); err != nil {
		return 0, nil, err
	}
	baseType, base, ok, err := r.readPacked(bh, depth+1)
	if err == nil && !ok {
		baseType, base, err = r.read(bh)
	}
	return baseType, base, err
}

// applyDelta applies a git delta to base.
func applyDelta(base, delta []byte) ([]byte, error) { return applyDeltaTo(nil, base, delta) }

// copyField reads a copy instruction's field of up to size bytes (its offset: flags 0 to 3;
// its size: flags 4 to 6): the bytes whose flag bits, from bit first of op, are set, lowest
// first. It returns the field and the rest of delta.
func copyField(op byte, first, size int, delta []byte) (uint64, []byte, bool) {
	var v uint64
	for i := range size {
		if op&(1<<(first+i)) != 0 {
			if len(delta) == 0 {
				return 0, nil, false
			}
			v |= uint64(delta[0]) << (8 * i)
			delta = delta[1:]
		}
	}
	return v, delta, true
}

// applyDeltaTo is applyDelta into dst's room (a new slice when it is too small).
func applyDeltaTo(dst, base, delta []byte) ([]byte, error) {
	errBad := errors.New("malformed delta")
	varint := func() (uint64, bool) {
		var v uint64
		for shift := 0; len(delta) > 0; shift += 7 {
			c := delta[0]
			delta = delta[1:]
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	srcSize, ok1 := varint()
	dstSize, ok2 := varint()
	if !ok1 || !ok2 || srcSize != uint64(len(base)) || dstSize > 1<<32 {
		return nil, errBad
	}
	out := dst[:0]
	if uint64(cap(out)) < dstSize {
		out = make([]byte, 0, dstSize)
	}
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		if op&0x80 == 0 { // insert op bytes
			n := int(op)
			if n == 0 || n > len(delta) {
				return nil, errBad
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
			continue
		}
		var off, n uint64
		var ok bool
		if off, delta, ok = copyField(op, 0, 4, delta); !ok {
			return nil, errBad
		}
		if n, delta, ok = copyField(op, 4, 3, delta); !ok {
			return nil, errBad
		}
		if n == 0 {
			n = 0x10000
		}
		if off+n > uint64(len(base)) {
			return nil, errBad
		}
		out = append(out, base[off:off+n]...)
	}
	if uint64(len(out)) != dstSize {
		return nil, errBad
	}
	return out, nil
}

// readLoose reads a loose object.
func (r *objectReader) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, bool, error) {
	s := h.String()
	f, err := os.Open(filepath.Join(r.dir, s[:2], s[2:]))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil, false, nil
	} else if err != nil {
		return 0, nil, false, err
	}
	defer func() { _ = f.Close() }()
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, false, err
	}
	all, err := io.ReadAll(zr)
	if err != nil {
		return 0, nil, false, err
	}
	header, data, ok := bytes.Cut(all, []byte{0})
	typName, sizeText, ok2 := strings.Cut(string(header), " ")
	typ, err := plumbing.ParseObjectType(typName)
	size, serr := strconv.Atoi(sizeText)
	if !ok || !ok2 || err != nil || serr != nil || size != len(data) {
		return 0, nil, false, fmt.Errorf("loose object %s: malformed", s)
	}
	return typ, data, true, nil
}

// readFallback reads an object through go-git (alternates, or a pack that appeared since).
func (r *objectReader) readFallback(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	r.mu.Lock()
	if r.fallback == nil {
		s, err := r.fallbackOpen()
		if err != nil {
			r.mu.Unlock()
			return 0, nil, err
		}
		r.fallback = s
	}
	s := r.fallback
	r.mu.Unlock()
	obj, err := s.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, err
	}
	data, err := readObject(obj)
	return obj.Type(), data, err
}

// commitTree returns the tree of commit h.
func (r *objectReader) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	typ, data, err := r.read(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	tree, ok := bytes.CutPrefix(line, []byte("tree "))
	if typ != plumbing.CommitObject || !ok || len(tree) != 40 {
		return plumbing.ZeroHash, fmt.Errorf("%s is not a commit", h)
	}
	return plumbing.NewHash(string(tree)), nil
}

// tree reads tree h into entries.
func (r *objectReader) tree(h plumbing.Hash) (map[string]*entry, []treeName, error) {
	typ, data, err := r.read(h)
	if err != nil {
		return nil, nil, err
	}
	if typ != plumbing.TreeObject {
		return nil, nil, fmt.Errorf("a %s, not a tree", typ)
	}
	n, err := countTreeEntries(data)
	if err != nil {
		return nil, nil, err
	}
	// One allocation for the entries, one for the names: a cluster type's folder has one
	// entry per deployment target, tens of thousands in a large fleet.
	entries, order := make([]entry, n), make([]treeName, n)
	names := string(data)
	out := make(map[string]*entry, n)
	for i, at := 0, 0; at < len(names); i++ {
		sp := at + strings.IndexByte(names[at:], ' ')
		nul := sp + strings.IndexByte(names[sp:], 0)
		mode, err := parseMode(names[at:sp])
		if err != nil {
			return nil, nil, err
		}
		e := &entries[i]
		e.mode = mode
		copy(e.hash[:], names[nul+1:nul+21])
		name := names[sp+1 : nul]
		out[name] = e
		order[i] = treeName{name: name, dir: e.isDir()}
		at = nul + 21
	}
	return out, order, nil
}

// countTreeEntries counts the entries of a tree object, and checks their form.
func countTreeEntries(data []byte) (int, error) {
	n := 0
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+21 {
			return 0, errors.New("malformed tree")
		}
		data = data[nul+21:]
		n++
	}
	return n, nil
}

// parseMode parses a tree entry's mode, the two of a fleetform tree without a conversion.
func parseMode(s string) (filemode.FileMode, error) {
	switch s {
	case "100644":
		return filemode.Regular, nil
	case "40000":
		return filemode.Dir, nil
	}
	return filemode.New(s)
}
