//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package gitrepo

import "os"

// Without mmap, packs and their indexes are read with ReadAt.

func mapFile(*os.File) []byte { return nil }

func unmapFile([]byte) {}
