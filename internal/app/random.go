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
	// inputs, which of its lines differ.
	random map[string][]bool
}

// randomLines compares two renders of the same inputs and records, for each file that
// differs, the lines that differ.
func (f *Folder) randomLines(again map[string][]byte) {
	for _, name := range slices.Sorted(maps.Keys(f.Files)) {
		a, b := f.Files[name], again[name]
		if bytes.Equal(a, b) {
			continue
		}
		la, lb := bytes.Split(a, []byte("\n")), bytes.Split(b, []byte("\n"))
		mask := make([]bool, len(la))
		if len(la) != len(lb) {
			continue // not line for line: the file is new each time
		}
		for i := range la {
			mask[i] = !bytes.Equal(la[i], lb[i])
		}
		if f.random == nil {
			f.random = map[string][]bool{}
		}
		f.random[name] = mask
	}
}

// KeepCommitted gives every file whose only difference from what the folder holds (prev)
// comes from a random function the folder's bytes back, so that rendering unchanged inputs
// again changes nothing; it returns those files, sorted.
func (f *Folder) KeepCommitted(prev func(name string) ([]byte, bool)) []string {
	var kept []string
	for _, name := range slices.Sorted(maps.Keys(f.random)) {
		old, ok := prev(name)
		if !ok || bytes.Equal(old, f.Files[name]) {
			continue
		}
		if sameButRandom(f.Files[name], old, f.random[name]) {
			f.Files[name] = old
			kept = append(kept, name)
		}
	}
	return kept
}

// sameButRandom reports whether old has the lines of cur but for those random marks.
func sameButRandom(cur, old []byte, random []bool) bool {
	lc, lo := bytes.Split(cur, []byte("\n")), bytes.Split(old, []byte("\n"))
	if len(lc) != len(lo) || len(lc) != len(random) {
		return false
	}
	for i := range lc {
		if !random[i] && !bytes.Equal(lc[i], lo[i]) {
			return false
		}
	}
	return true
}
