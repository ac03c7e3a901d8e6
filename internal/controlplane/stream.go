package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// decodeFile decodes every document of a YAML file. Documents that fail are reported and
// skipped; the others are returned.
//
// The YAML decoder cannot go on after a syntax error, and it rejects a whole stream for one
// character it does not accept (reading ahead, it may do so before returning the documents
// in front of it). So characters are checked here first, and after a syntax error decoding
// resumes at the next document marker ("---" at the start of a line): one broken document
// does not hide the others, and every error has the line where it is.
func decodeFile(data []byte, src Source) ([]document, []Diagnostic) {
	s := &stream{data: data, src: src}
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) {
		// UTF-16: the decoder converts it; lines and markers cannot be found in the bytes,
		// so the decoder's lines are taken as they are and there is no resuming.
		s.utf16, s.lines = true, []textLine{{0, len(data)}}
		if msg, line, ok := s.decodePart(1, 2); !ok {
			s.unreadable(max(line, 1), "invalid YAML: "+msg)
		}
		return s.docs, s.diags
	}
	s.lines = splitLines(data)
	for i, l := range s.lines {
		if isMarker(data[l.start:l.end]) {
			s.markers = append(s.markers, i+1)
		}
	}
	s.decode()
	return s.docs, s.diags
}

// textLine is the byte range of one line, without its line break.
type textLine struct{ start, end int }

// stream decodes one file.
type stream struct {
	data    []byte
	src     Source
	lines   []textLine // lines[i] is line i+1, as YAML counts lines
	markers []int      // the lines that are document markers, in order
	utf16   bool       // lines are not known
	docs    []document
	diags   []Diagnostic
}

func (s *stream) diag(line int, msg string) Diagnostic {
	d := s.src.Diag("", msg, s.tabHint(line))
	d.Line = line
	return d
}

// unreadable records an error that hides a document: neither its kind nor its labels are
// known, so it could be anything.
func (s *stream) unreadable(line int, msg string) {
	s.diags = append(s.diags, s.diag(line, msg))
	src := s.src
	src.Line = line
	s.docs = append(s.docs, document{broken: true, source: src})
}

// decode decodes the file, cutting out the documents holding characters YAML rejects.
func (s *stream) decode() {
	from := 1 // first line not decoded yet
	for {
		bad, msg := s.firstInvalid(from)
		if bad == 0 {
			s.decodeLines(from, len(s.lines)+1)
			return
		}
		// Decode the documents before the one holding the character, then resume after it.
		to := from
		for _, m := range s.markers {
			if m >= from && m <= bad {
				to = m
			}
		}
		s.decodeLines(from, to)
		s.unreadable(bad, "invalid YAML: "+msg)
		if from = s.markerAfter(bad, len(s.lines)+1); from == 0 {
			return
		}
	}
}

// decodeLines decodes lines [from, to), resuming after each syntax error at the first
// marker at or after the error's line that is after from: the error may be reported on the
// marker that ends a broken document, and when it is on line from, the document that line
// opens is the broken one.
func (s *stream) decodeLines(from, to int) {
	for from < to {
		msg, line, ok := s.decodePart(from, to)
		if ok {
			return
		}
		s.unreadable(line, "invalid YAML: "+msg)
		if from = s.markerAfter(max(line-1, from), to); from == 0 {
			return
		}
	}
}

// markerAfter returns the first marker line after line and before to, or 0.
func (s *stream) markerAfter(line, to int) int {
	i := sort.SearchInts(s.markers, line+1)
	if i < len(s.markers) && s.markers[i] < to {
		return s.markers[i]
	}
	return 0
}

// decodePart decodes the documents of lines [from, to). It returns ok at the end, or the
// message and line of the syntax error that stopped it.
func (s *stream) decodePart(from, to int) (msg string, line int, ok bool) {
	start, end := s.lines[from-1].start, len(s.data)
	if to <= len(s.lines) {
		end = s.lines[to-1].start
	}
	off := from - 1 // the part's line 1 is the file's line from
	dec := yaml.NewDecoder(bytes.NewReader(s.data[start:end]))
	last := 0 // line of the last document decoded
	for {
		var root yaml.Node
		err := dec.Decode(&root)
		if errors.Is(err, io.EOF) {
			return "", 0, true
		}
		if err != nil {
			msg, line := splitYAMLErr(err)
			switch {
			case line > 0 && s.utf16:
				return msg, line, false
			case line > 0 && strings.Contains(msg, "found a tab character"):
				// The decoder reports the line of the token before the tab.
				return msg, s.tabLine(line+off, to), false
			case line > 0:
				// At the end of the input the decoder reports the line after the last one.
				return msg, min(line+off, s.lastLine(to)), false
			}
			return msg, s.locate(msg, from, last, to), false
		}
		if off > 0 {
			shiftLines(&root, off)
		}
		last = root.Line
		doc, ds := decodeDocument(&root, s.src)
		s.diags = append(s.diags, ds...)
		if doc != nil {
			s.docs = append(s.docs, *doc)
		}
	}
}

var unknownAnchorRE = regexp.MustCompile(`^unknown anchor '(.*)' referenced$`)

// locate finds the line of an error the decoder gave no line for: the alias of an unknown
// anchor, else the start of the document after the last one decoded (line from when none
// was).
func (s *stream) locate(msg string, from, last, to int) int {
	docStart := from
	if last > 0 {
		if m := s.markerAfter(last, to); m > 0 {
			docStart = m
		}
	}
	if m := unknownAnchorRE.FindStringSubmatch(msg); m != nil {
		text := s.data[s.lines[docStart-1].start:]
		if i := bytes.Index(text, []byte("*"+m[1])); i >= 0 {
			return s.lineAt(s.lines[docStart-1].start + i)
		}
	}
	return docStart
}

// lastLine returns the last line before to that is not blank, or 1.
func (s *stream) lastLine(to int) int {
	for l := min(to, len(s.lines)+1) - 1; l >= 1; l-- {
		if len(bytes.TrimSpace(s.data[s.lines[l-1].start:s.lines[l-1].end])) > 0 {
			return l
		}
	}
	return 1
}

// lineAt returns the line holding byte offset.
func (s *stream) lineAt(offset int) int {
	return sort.Search(len(s.lines), func(i int) bool { return s.lines[i].end >= offset }) + 1
}

// firstInvalid returns the first line at or after from holding a character the YAML
// decoder rejects, and why, or 0: invalid UTF-8, and control characters other than tab and
// line breaks (YAML's printable set).
func (s *stream) firstInvalid(from int) (int, string) {
	for i := s.lines[from-1].start; i < len(s.data); {
		r, size := utf8.DecodeRune(s.data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return s.lineAt(i), fmt.Sprintf("invalid UTF-8 byte 0x%02x", s.data[i])
		case !yamlPrintable(r):
			return s.lineAt(i), fmt.Sprintf("control character %U is not allowed", r)
		}
		i += size
	}
	return 0, ""
}

func yamlPrintable(r rune) bool {
	return r == '\t' || r == '\n' || r == '\r' || (r >= 0x20 && r <= 0x7e) || r == 0x85 ||
		(r >= 0xa0 && r <= 0xd7ff) || (r >= 0xe000 && r <= 0xfffd) || (r >= 0x10000 && r <= 0x10ffff)
}

// splitLines splits data at YAML's line breaks: CR LF, CR, LF, NEL, LS and PS.
func splitLines(data []byte) []textLine {
	var out []textLine
	start := 0
	for i := 0; i < len(data); {
		n := 0 // length of the line break at i
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			n = 2
		case data[i] == '\r' || data[i] == '\n':
			n = 1
		case bytes.HasPrefix(data[i:], []byte("\u0085")):
			n = 2
		case bytes.HasPrefix(data[i:], []byte("\u2028")), bytes.HasPrefix(data[i:], []byte("\u2029")):
			n = 3
		}
		if n == 0 {
			i++
			continue
		}
		out = append(out, textLine{start, i})
		i += n
		start = i
	}
	return append(out, textLine{start, len(data)})
}

// isMarker reports whether a line is a document start marker: "---" alone or followed by a
// space or a tab.
func isMarker(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("---"))
	return ok && (len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t')
}

// tabHint returns a hint when line is indented with a tab.
// tabLine returns the first line from line on (before to) indented with a tab, or line.
func (s *stream) tabLine(line, to int) int {
	for l := line; l < min(to, len(s.lines)+1); l++ {
		if s.tabHint(l) != "" {
			return l
		}
	}
	return line
}

func (s *stream) tabHint(line int) string {
	if s.utf16 || line < 1 || line > len(s.lines) {
		return ""
	}
	text := s.data[s.lines[line-1].start:s.lines[line-1].end]
	if indent := text[:len(text)-len(bytes.TrimLeft(text, " \t"))]; bytes.IndexByte(indent, '\t') >= 0 {
		return "indent with spaces: YAML does not allow tabs for indentation"
	}
	return ""
}
