package controlplane

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// gitOpsPathHint says what a GitOpsRepo's spec.path may be.
const gitOpsPathHint = "give a folder relative to the repository's root, such as clusters/dev, or . for the root"

// checkGitOpsPath reports a GitOpsRepo whose spec.path cannot be written to. The GitOpsRepo
// is kept: apply refuses the path too, so nothing is written anywhere else instead.
func (b *builder) checkGitOpsPath(o *v1alpha1.GitOpsRepo, src Source) {
	if d := (&GitOpsRepo{o, src}).CheckPath(); d != nil {
		b.diag(*d)
	}
}

// CheckPath returns the error, located on the line of spec.path, that makes the
// GitOpsRepo's path unusable (see CheckGitOpsPath), or nil.
func (g *GitOpsRepo) CheckPath() *Diagnostic {
	if err := CheckGitOpsPath(g.Spec.Path); err != nil {
		d := g.Source.Diag("spec.path", err.Error(), gitOpsPathHint)
		return &d
	}
	return nil
}

// CheckGitOpsPath returns why p cannot be the folder of a git repository an environment's
// tree is written under, or nil. "", "." and "./x" are valid, and so is a trailing slash.
// Refused: absolute paths and drive letters, backslashes, control characters, invalid
// UTF-8, empty components ("a//b"), ".." components, and any component git refuses to
// check out (see CheckTreeName).
func CheckGitOpsPath(p string) error {
	p = strings.TrimSpace(p) // as the writer reads it
	switch {
	case p == "":
		return nil
	case !utf8.ValidString(p):
		return fmt.Errorf("path %q is not valid UTF-8", p)
	case strings.ContainsFunc(p, IsControl):
		return fmt.Errorf("path %q contains a control character", p)
	case strings.Contains(p, `\`):
		return fmt.Errorf("path %q contains a backslash: folders are separated by /", p)
	case strings.HasPrefix(p, "/"):
		return fmt.Errorf("path %q is absolute", p)
	case hasDrivePrefix(p):
		return fmt.Errorf("path %q starts with a drive letter", p)
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		switch {
		case c == "" && i == len(parts)-1: // a trailing slash
		case c == "":
			return fmt.Errorf("path %q has an empty component (//)", p)
		case c == ".":
		case c == "..":
			return fmt.Errorf("path %q has a .. component", p)
		default:
			if err := CheckTreeName(c); err != nil {
				return fmt.Errorf("path %q: %w", p, err)
			}
		}
	}
	return nil
}

// ErrGitDir is what CheckTreeName returns for a name that is, or a file system would take
// for, a repository's .git folder.
var ErrGitDir = errors.New("names the repository's .git folder (git refuses to check out such a path)")

// CheckTreeName returns why name cannot be the name of a file or folder in a git tree, or
// nil: the names git's fsck and checkout refuse everywhere (empty, ".", "..", a "/" or a
// NUL byte) and every name that is .git case-insensitively or that NTFS or HFS+ would
// read as .git (ErrGitDir): ".GIT", ".git.", ".git ", ".git::$INDEX_ALLOCATION", "git~1",
// ".g\u200cit". These are the rules of git's verify_path with core.protectNTFS and
// core.protectHFS, which git applies to every tree it checks out or receives with fsck.
func CheckTreeName(name string) error {
	switch {
	case name == "":
		return errors.New("empty name")
	case name == "." || name == "..":
		return fmt.Errorf("%q is not a file or folder name", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("name %q contains a / or a NUL byte", name)
	case isNTFSDotGit(name) || isHFSDotGit(name):
		return fmt.Errorf("%q %w", name, ErrGitDir)
	}
	return nil
}

// IsControl reports a control character (C0 or DEL): nothing a name, a URL, a path or a
// line of a generated script may hold.
func IsControl(r rune) bool { return r < 0x20 || r == 0x7f }

// hasDrivePrefix reports a Windows drive letter: "C:" or "C:/x".
func hasDrivePrefix(p string) bool {
	return len(p) >= 2 && p[1] == ':' && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
}

// isNTFSDotGit reports a name NTFS resolves to .git: ".git" or its short name "git~1", in
// any case, followed only by spaces and dots (which NTFS drops), up to an optional
// alternate data stream (":stream"). As git's is_ntfs_dotgit.
func isNTFSDotGit(name string) bool {
	var rest string
	switch {
	case len(name) >= 4 && name[0] == '.' && strings.EqualFold(name[1:4], "git"):
		rest = name[4:]
	case len(name) >= 5 && strings.EqualFold(name[:3], "git") && name[3:5] == "~1":
		rest = name[5:]
	default:
		return false
	}
	for i := range len(rest) {
		switch rest[i] {
		case ':':
			return true
		case ' ', '.':
		default:
			return false
		}
	}
	return true
}

// isHFSDotGit reports a name HFS+ resolves to .git: ".git" in any case once the code points
// HFS+ ignores are left out. As git's is_hfs_dotgit.
func isHFSDotGit(name string) bool {
	if isASCII(name) { // the code points HFS+ leaves out are not ASCII: nothing to leave out
		return strings.EqualFold(name, ".git")
	}
	var b strings.Builder
	for _, r := range name {
		if !hfsIgnored(r) {
			b.WriteRune(r)
		}
	}
	return strings.EqualFold(b.String(), ".git") && isASCII(b.String())
}

// hfsIgnored reports the code points HFS+ leaves out of names (git's next_hfs_char).
func hfsIgnored(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
