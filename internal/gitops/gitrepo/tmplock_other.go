//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package gitrepo

// Without flock, writers take no lock, and a temporary file is taken as left behind by a
// killed writer from its age alone (staleTmpAge).

func lockTmpShared(string) (func(), error) { return func() {}, nil }

func tryLockTmpExclusive(string) (unlock func(), ok bool, err error) { return func() {}, true, nil }
