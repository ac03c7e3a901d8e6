package app

import (
	"bytes"
	"maps"
	"regexp"
	"slices"

	"helm.sh/helm/v3/pkg/chart"
)

// randomFuncs are the template functions whose result changes on every render.
var randomFuncs = regexp.MustCompile(`\b(randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|uuidv4|shuffle|` +
	`genCA|genCAWithKey|genPrivateKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey)\b`)

// usesRandom reports whether a chart's templates, or its subcharts', call a random
// function.
func usesRandom(c *chart.Chart) bool {
	for _, t := range c.Templates {
		if randomFuncs.Match(t.Data) {
			return true
		}
	}
	return slices.ContainsFunc(c.Dependencies(), usesRandom)
}

// Folder is a target's rendered folder: its files by path in the folder.
type Folder struct {
	Files map[string][]byte
	// random holds, for each file whose object differs between two renders of the same
	// inputs, what of each of its lines does not change on its own.
	random map[string][]fixedParts
}

// fixedParts is what of a line two renders of the same inputs agree on: all of it, or, for
// a line with a random value, its start and its end around that value.
type fixedParts struct {
	random         bool
	prefix, suffix []byte
}

// randomLines compares renders of the same inputs (f's and others) and records, for each
// file that differs, the lines that differ and what they keep around the part that differs
// (the more renders, the less a random value's first or last characters can agree by chance).
func (f *Folder) randomLines(others ...map[string][]byte) {
	for _, name := range slices.Sorted(maps.Keys(f.Files)) {
		la := bytes.Split(f.Files[name], []byte("\n"))
		parts, differs := fixedAcross(la, others, name)
		if !differs {
			continue
		}
		if f.random == nil {
			f.random = map[string][]fixedParts{}
		}
		f.random[name] = parts
	}
}

// fixedAcross compares the lines of a file (la) with its renders in others, line for line:
// for each line that differs, what all of them keep at its start and its end. differs is
// false when no render differs, or one is not line for line (the file is new each time).
func fixedAcross(la [][]byte, others []map[string][]byte, name string) (parts []fixedParts, differs bool) {
	pre, suf := make([]int, len(la)), make([]int, len(la)) // what every render so far keeps
	for i := range la {
		pre[i], suf[i] = len(la[i]), 0
	}
	random := make([]bool, len(la))
	for _, other := range others {
		lb := bytes.Split(other[name], []byte("\n"))
		if len(lb) != len(la) {
			return nil, false
		}
		for i := range la {
			if bytes.Equal(la[i], lb[i]) {
				continue
			}
			p := min(pre[i], commonPrefix(la[i], lb[i]))
			s := commonPrefix(reversed(la[i][p:]), reversed(lb[i][p:]))
			if random[i] {
				s = min(s, suf[i])
			}
			pre[i], suf[i], random[i], differs = p, s, true, true
		}
	}
	parts = make([]fixedParts, len(la))
	for i, line := range la {
		if !random[i] {
			continue
		}
		// The renders' random values may agree on a first or last character by chance (a
		// base64 value starts with one of few letters): the part that changes runs to the
		// ends of the word it is in.
		start, end := pre[i], len(line)-suf[i]
		for start > 0 && isWordByte(line[start-1]) {
			start--
		}
		for end < len(line) && isWordByte(line[end]) {
			end++
		}
		parts[i] = fixedParts{random: true, prefix: line[:start], suffix: line[end:]}
	}
	return parts, differs
}

// isWordByte reports whether b is part of a word a random function writes: a letter, a
// digit, or one of base64's "+/=" and "_" (a '-' or a '.' separates words).
func isWordByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '+' || b == '/' || b == '=' || b == '_'
}

// commonPrefix is the length of what a and b start with alike.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// reversed is a reversed copy of b.
func reversed(b []byte) []byte {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out
}

// KeepCommitted gives the files whose only difference from what the folder holds (prev)
// comes from random functions the folder's bytes back, so that rendering again changes
// nothing that did not change; it returns those files, sorted. It keeps them all or none:
// when a file with random values changed for real (or is new), the whole render is written,
// so that what one file derives from another's random values (a checksum annotation) stays
// true.
func (f *Folder) KeepCommitted(prev func(name string) ([]byte, bool)) []string {
	var kept []string
	for _, name := range slices.Sorted(maps.Keys(f.random)) {
		old, ok := prev(name)
		switch {
		case ok && bytes.Equal(old, f.Files[name]):
		case ok && sameButRandom(f.Files[name], old, f.random[name]):
			kept = append(kept, name)
		default:
			return nil
		}
	}
	for _, name := range kept {
		f.Files[name], _ = prev(name)
	}
	return kept
}

// sameButRandom reports whether old has the lines of cur but for their random values: a
// line with one has the same start and end around it.
func sameButRandom(cur, old []byte, parts []fixedParts) bool {
	lc, lo := bytes.Split(cur, []byte("\n")), bytes.Split(old, []byte("\n"))
	if len(lc) != len(lo) || len(lc) != len(parts) {
		return false
	}
	for i := range lc {
		p := parts[i]
		switch {
		case !p.random && !bytes.Equal(lc[i], lo[i]):
			return false
		case p.random && (len(lo[i]) < len(p.prefix)+len(p.suffix) || !bytes.HasPrefix(lo[i], p.prefix) || !bytes.HasSuffix(lo[i], p.suffix)):
			return false
		}
	}
	return true
}
