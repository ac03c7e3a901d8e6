package app

import (
	"errors"
	"fmt"
	"strings"
)

// SubstError is a variable a values file uses that the command was not given.
type SubstError struct {
	File string
	Line int
	Name string
}

func (e *SubstError) Error() string {
	return fmt.Sprintf("%s:%d: variable %s is not set (give it with --var %s=VALUE, or --version / --image-tag for VERSION / IMAGE_TAG)",
		e.File, e.Line, e.Name, e.Name)
}

// Subst replaces $NAME and ${NAME} in text as envsubst does, but only with vars: a variable
// that is not in vars is an error naming file and line, never the process environment. "$$"
// is a literal "$" (an escape envsubst does not have). A "$" not followed by a name is kept.
// Lines whose first non-blank character is "#" (YAML comments) are left as they are.
func Subst(file string, text []byte, vars map[string]string) ([]byte, error) {
	if !strings.Contains(string(text), "$") {
		return text, nil
	}
	var b strings.Builder
	b.Grow(len(text))
	var errs []error
	for i, line := range strings.SplitAfter(string(text), "\n") {
		if !strings.Contains(line, "$") || strings.HasPrefix(strings.TrimLeft(line, " \t"), "#") {
			b.WriteString(line)
			continue
		}
		errs = substLine(&b, line, vars, func(name string) error {
			return &SubstError{File: file, Line: i + 1, Name: name}
		}, errs)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return []byte(b.String()), nil
}

// substLine writes line with its variables replaced; unknown ones are appended to errs.
func substLine(b *strings.Builder, line string, vars map[string]string, unknown func(string) error, errs []error) []error {
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c != '$' || i+1 >= len(line) {
			b.WriteByte(c)
			continue
		}
		name, width := varAt(line[i+1:])
		switch {
		case line[i+1] == '$':
			b.WriteByte('$')
			i++
		case name == "":
			b.WriteByte(c)
		default:
			v, ok := vars[name]
			if !ok {
				errs = append(errs, unknown(name))
			}
			b.WriteString(v)
			i += width
		}
	}
	return errs
}

// varAt reads a variable reference after a "$": NAME or {NAME}; it returns the name and the
// number of bytes it takes, or "" when there is none.
func varAt(s string) (string, int) {
	if strings.HasPrefix(s, "{") {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return "", 0
		}
		if n, w := nameAt(s[1:end]); n != "" && w == end-1 {
			return n, end + 1
		}
		return "", 0
	}
	return nameAt(s)
}

// nameAt reads a shell variable name: a letter or "_", then letters, digits or "_".
func nameAt(s string) (string, int) {
	n := 0
	for n < len(s) {
		c := s[n]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (n == 0 || c < '0' || c > '9') {
			break
		}
		n++
	}
	return s[:n], n
}
