package app

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/yamlnode"
)

// The variables every run defines, Kalypso's conventions: --version and --image-tag give
// their values.
const (
	VersionVar  = "VERSION"
	ImageTagVar = "IMAGE_TAG"
)

// Vars are the variables of a run: the names substituted in values and kustomization files
// (the --var names, VERSION, IMAGE_TAG and the names fleetform-app.yaml declares) and the
// values given for them. Any other $word is left as it is. The zero Vars defines nothing.
type Vars struct {
	values  map[string]string
	defined map[string]bool
}

// NewVars defines the variables of a run: given (--var NAME=VALUE), VERSION and IMAGE_TAG
// (with version and imageTag as values when they are not empty) and declared (the
// variables: of fleetform-app.yaml, which get no value). A name that is not a shell
// variable name is an error.
func NewVars(given map[string]string, declared []string, version, imageTag string) (Vars, error) {
	v := Vars{values: map[string]string{}, defined: map[string]bool{VersionVar: true, ImageTagVar: true}}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if !IsVarName(name) {
			return Vars{}, fmt.Errorf("--var %s=…: %q is not a variable name (letters, digits and _, not starting with a digit)", name, name)
		}
		v.values[name], v.defined[name] = given[name], true
	}
	for _, name := range declared {
		if !IsVarName(name) {
			return Vars{}, fmt.Errorf("%s: variables: %q is not a variable name (letters, digits and _, not starting with a digit)", SettingsFile, name)
		}
		v.defined[name] = true
	}
	if version != "" {
		v.values[VersionVar] = version
	}
	if imageTag != "" {
		v.values[ImageTagVar] = imageTag
	}
	return v, nil
}

// Defined reports whether name is substituted.
func (v Vars) Defined(name string) bool { return v.defined[name] }

// Value returns the value given for name, and whether one was.
func (v Vars) Value(name string) (string, bool) {
	s, ok := v.values[name]
	return s, ok
}

// Names returns the defined names, sorted.
func (v Vars) Names() []string { return slices.Sorted(maps.Keys(v.defined)) }

// key identifies the variables: equal for the same defined names and values.
func (v Vars) key() string {
	var b strings.Builder
	for _, name := range v.Names() {
		value, ok := v.Value(name)
		fmt.Fprintf(&b, "%s=%t:%s\x00", name, ok, value)
	}
	return b.String()
}

// IsVarName reports whether s is a shell variable name: a letter or "_", then letters,
// digits or "_".
func IsVarName(s string) bool {
	name, _ := nameAt(s)
	return name != "" && name == s
}

// SubstError is a defined variable a file uses that the command was given no value for.
type SubstError struct {
	File string
	Line int
	Name string
}

func (e *SubstError) Error() string {
	how := "--var " + e.Name + "=VALUE"
	switch e.Name {
	case VersionVar:
		how = "--version"
	case ImageTagVar:
		how = "--image-tag"
	}
	return fmt.Sprintf("%s:%d: variable %s is not set (give it with %s)", e.File, e.Line, e.Name, how)
}

// Subst replaces $NAME and ${NAME} in the string values of a YAML file (every document),
// only for the variables vars defines: any other $word is left as it is, and a defined
// variable without a value is an error naming file and line (never the process
// environment). "$$" before a defined name is an escape ("$$IMAGE_TAG" is "$IMAGE_TAG");
// any other "$$" is kept. The file is parsed first and values are substituted into its
// scalars, never into its text: a value cannot add keys, end a quoted string or be cut by
// a "#", comments are left as they are, and a substituted scalar is a string (quoted when
// it would read as another type, or as a boolean to the YAML 1.1 Helm reads: NO, off, y)
// unless it carries an explicit tag (replicas: !!int $REPLICAS), which it must then
// satisfy. A file that uses no defined name is returned as it is; one that does is returned
// re-encoded.
func Subst(file string, text []byte, vars Vars) ([]byte, error) {
	if !usesDefined(text, vars) {
		return text, nil
	}
	var docs []*yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(text))
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		docs = append(docs, &doc)
	}
	changed := false
	for _, doc := range docs {
		c, err := SubstNode(file, doc, vars)
		if err != nil {
			return nil, err
		}
		changed = changed || c
	}
	if !changed {
		return text, nil
	}
	var b bytes.Buffer
	enc := yamlnode.NewEncoder(&b)
	for _, doc := range docs {
		if err := enc.Encode(doc); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return b.Bytes(), nil
}

// SubstNode substitutes the variables vars defines in every scalar below n, keys included
// (see Subst), and reports whether any changed. Lines are n's own.
func SubstNode(file string, n *yaml.Node, vars Vars) (bool, error) {
	var errs []error
	changed := false
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode {
			c, err := substScalar(file, n, vars)
			changed = changed || c
			if err != nil {
				errs = append(errs, err)
			}
			return
		}
		if n.Kind == yaml.AliasNode {
			return // its anchor is substituted where it is defined
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return changed, errors.Join(errs...)
}

// substScalar substitutes in one scalar. A changed scalar becomes a string (quoted as Subst
// says), unless it has an explicit tag: then the new value must be one of that tag.
func substScalar(file string, n *yaml.Node, vars Vars) (bool, error) {
	if !strings.Contains(n.Value, "$") {
		return false, nil
	}
	var b strings.Builder
	errs := substLine(&b, n.Value, vars, func(name string) error {
		return &SubstError{File: file, Line: n.Line, Name: name}
	}, nil)
	if len(errs) > 0 {
		return false, errors.Join(errs...)
	}
	if b.String() == n.Value {
		return false, nil
	}
	n.Value = b.String()
	if n.Style&yaml.TaggedStyle == 0 {
		n.Tag = "!!str"
		yamlnode.QuoteString(n) // quoted where YAML 1.1 (Helm) would read a boolean: NO, off, y
		return true, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return false, fmt.Errorf("%s:%d: %s %q: the substituted value is not of its tag (%w)", file, n.Line, n.Tag, n.Value, err)
	}
	return true, nil
}

// usesDefined reports whether text has a reference ($NAME, ${NAME} or $$NAME) to a name
// vars defines.
func usesDefined(text []byte, vars Vars) bool {
	if len(vars.defined) == 0 || !bytes.ContainsRune(text, '$') {
		return false
	}
	s := string(text)
	for i := strings.IndexByte(s, '$'); i >= 0; i = strings.IndexByte(s, '$') {
		s = s[i+1:]
		if name, _ := varAt(s); vars.Defined(name) {
			return true
		}
	}
	return false
}

// substLine writes line with its defined variables replaced; those without a value are
// appended to errs.
func substLine(b *strings.Builder, line string, vars Vars, noValue func(string) error, errs []error) []error {
	for i := 0; i < len(line); i++ {
		if line[i] != '$' {
			b.WriteByte(line[i])
			continue
		}
		if strings.HasPrefix(line[i:], "$$") {
			// "$$" then a defined reference: the reference, literally; else "$$" as it is.
			if name, width := varAt(line[i+2:]); vars.Defined(name) {
				b.WriteString(line[i+1 : i+2+width])
				i += 1 + width
				continue
			}
			b.WriteString("$$")
			i++
			continue
		}
		name, width := varAt(line[i+1:])
		if !vars.Defined(name) {
			b.WriteByte('$')
			continue
		}
		v, ok := vars.Value(name)
		if !ok {
			errs = append(errs, noValue(name))
		}
		b.WriteString(v)
		i += width
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
