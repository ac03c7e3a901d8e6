package fleetform_test

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// maxCommittedFile bounds what may be committed: sources, docs and small test data.
const maxCommittedFile = 2 << 20

// binaryMagic are the first bytes of executables and archives that are build outputs.
var binaryMagic = map[string][]byte{
	"ELF executable":     []byte("\x7fELF"),
	"Mach-O executable":  {0xcf, 0xfa, 0xed, 0xfe},
	"Windows executable": []byte("MZ"),
	"Go test archive":    []byte("!<arch>\n"),
}

// TestNoBuildOutputsCommitted: no binary or other build output is in git (a stale binary at
// the root once answered "unknown command" to a new user's ./fleetform status).
func TestNoBuildOutputsCommitted(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v)", err)
	}
	for _, name := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		st, err := os.Lstat(name)
		if err != nil || !st.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		if st.Size() > maxCommittedFile {
			t.Errorf("%s is committed and has %d bytes: build outputs and large data do not belong in git", name, st.Size())
		}
		head := make([]byte, 8)
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := f.Read(head)
		_ = f.Close()
		for what, magic := range binaryMagic {
			if bytes.HasPrefix(head[:n], magic) {
				t.Errorf("%s is committed and is a %s: build outputs do not belong in git", name, what)
			}
		}
	}
}
