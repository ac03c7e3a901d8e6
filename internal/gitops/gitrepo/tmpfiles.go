package gitrepo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// staleTmpAge is how old a temporary file in objects/fleetform-tmp must be before it may
// be removed as left behind by a writer that was killed. A running writer writes to its
// temporary pack continuously and renames it away within seconds of its last write, and it
// also holds the writers' lock (tmpLockName), which keeps its files even when it is
// stopped (SIGSTOP, a suspended machine) for longer.
const staleTmpAge = time.Hour

// tmpLockName is the lock file in objects/fleetform-tmp: every writer holds it shared from
// before it creates its temporary files until they are renamed into objects/pack or
// removed; stale files are removed only while it is held exclusively, that is while no
// writer is at work. The operating system releases the lock of a killed process.
const tmpLockName = "writers.lock"

// LockTemporaryFiles holds the writers' lock of a repository's objects/fleetform-tmp (dir)
// shared, as a writer at work does, until the returned function is called: while it is
// held, no temporary file there is removed.
func LockTemporaryFiles(dir string) (func(), error) { return lockTmpShared(dir) }

// tmpPrefixes are the names the pack writer gives its temporary files.
var tmpPrefixes = []string{"tmp_pack_", "tmp_idx_"}

// RemoveStaleTemporaryFiles removes the temporary packs and indexes that writers killed
// before they finished left in objects/fleetform-tmp (a cold apply's pack is 100 MB and
// more, and git gc keeps them): the files older than staleTmpAge, and only when no writer
// holds the writers' lock. Nothing is removed when another writer is at work; the next
// write looks again. Failures are logged: they never fail a write.
func (r *Repo) RemoveStaleTemporaryFiles(now time.Time) {
	dir := filepath.Join(r.gitDir, "objects", TemporaryDir)
	stale := staleTmpFiles(dir, now)
	if len(stale) == 0 {
		return
	}
	unlock, ok, err := tryLockTmpExclusive(dir)
	if err != nil {
		r.logger.Warn("cannot lock the temporary files of the GitOps repository", "dir", dir, "error", err.Error())
		return
	}
	if !ok {
		r.logger.Debug("another writer is at work: temporary files kept", "dir", dir, "files", len(stale))
		return
	}
	defer unlock()
	for _, f := range staleTmpFiles(dir, now) { // again, under the lock
		if err := os.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.logger.Warn("cannot remove a temporary file left by an interrupted write", "file", f.path, "error", err.Error())
			continue
		}
		r.logger.Info("removed a temporary file left by an interrupted write", "file", f.path, "bytes", f.size,
			"age", now.Sub(f.modified).Round(time.Second).String())
	}
}

type tmpFile struct {
	path     string
	size     int64
	modified time.Time
}

// staleTmpFiles lists the writer's temporary files in dir last modified before
// now - staleTmpAge (regular files only: anything else is not the writer's).
func staleTmpFiles(dir string, now time.Time) []tmpFile {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []tmpFile
	for _, e := range entries {
		if !e.Type().IsRegular() || !hasTmpPrefix(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil || now.Sub(fi.ModTime()) < staleTmpAge {
			continue
		}
		out = append(out, tmpFile{path: filepath.Join(dir, e.Name()), size: fi.Size(), modified: fi.ModTime()})
	}
	return out
}

func hasTmpPrefix(name string) bool {
	for _, p := range tmpPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
