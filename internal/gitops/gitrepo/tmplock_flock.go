//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package gitrepo

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockTmpShared takes the writers' lock of the temporary folder dir shared (waiting while a
// cleaner holds it) and returns its release.
func lockTmpShared(dir string) (func(), error) {
	f, err := openTmpLock(dir)
	if err != nil {
		return nil, err
	}
	if err := flock(f, syscall.LOCK_SH); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { _ = f.Close() }, nil // closing releases the lock
}

// tryLockTmpExclusive takes the writers' lock of dir exclusively, without waiting: ok is
// false when a writer holds it.
func tryLockTmpExclusive(dir string) (unlock func(), ok bool, err error) {
	f, err := openTmpLock(dir)
	if err != nil {
		return nil, false, err
	}
	err = flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		_ = f.Close()
		return nil, false, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, false, err
	}
	return func() { _ = f.Close() }, true, nil
}

func openTmpLock(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, tmpLockName), os.O_RDWR|os.O_CREATE, 0o644) //nolint:gosec // an empty lock file in objects/, git's own mode for files there
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
