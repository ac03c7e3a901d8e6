//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gitrepo

import (
	"os"
	"syscall"
)

// mapFile maps a pack or pack index read-only into memory, or returns nil when it cannot
// (then it is read with ReadAt). git never rewrites a pack or an index in place: a
// repacked one is a new file, and a file removed while mapped stays readable until unmapped.
func mapFile(f *os.File) []byte {
	st, err := f.Stat()
	if err != nil || st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED) //nolint:gosec // a file descriptor fits an int
	if err != nil {
		return nil
	}
	return data
}

// unmapFile releases what mapFile mapped.
func unmapFile(data []byte) {
	if data != nil {
		_ = syscall.Munmap(data)
	}
}
