package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetform/fleetform/internal/schemacheck"
)

// Schema is the compiled values schema of an application and the file it came from.
type Schema struct {
	File   string
	schema *jsonschema.Schema
}

// compileSchema compiles a JSON Schema file (JSON text). References to anything but the
// schema itself are refused: a schema cannot read files or the network.
func compileSchema(file string, data []byte) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: not JSON: %w", file, err)
	}
	sch, err := schemacheck.Compile("mem:///"+file, doc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &Schema{File: file, schema: sch}, nil
}

// Validate checks composed values against the schema. Each problem names the key, the
// rule of the schema it breaks and the file that set the value.
func (s *Schema) Validate(v *Values) []string {
	return sourced(s.check(v.Data), v)
}

// schemaProblem is one problem of values with a schema: the key (a values path, "" for the
// values) and what is wrong with it, with the rule and the schema's file.
type schemaProblem struct {
	Key, Text string
}

// check checks data (values as Go values) against the schema.
func (s *Schema) check(data any) []schemaProblem {
	text, err := json.Marshal(data)
	if err != nil {
		return []schemaProblem{{Text: err.Error()}}
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(text)))
	if err != nil {
		return []schemaProblem{{Text: err.Error()}}
	}
	err = s.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return []schemaProblem{{Text: err.Error()}}
	}
	var out []schemaProblem
	for _, e := range schemacheck.Leaves(ve) {
		out = append(out, schemaProblem{Key: locationPath(e.InstanceLocation),
			Text: fmt.Sprintf("%s (rule %s of %s)", schemacheck.Message(e), schemacheck.Rule(e), s.File)})
	}
	return out
}

// sourced words problems, each with the file that set its value in v when one did, sorted.
func sourced(problems []schemaProblem, v *Values) []string {
	out := make([]string, 0, len(problems))
	for _, p := range problems {
		shown := p.Key
		if shown == "" {
			shown = "(values)"
		}
		msg := shown + ": " + p.Text
		if src, ok := setBy(v, p.Key); ok {
			msg += "; value set in " + src.String()
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
}

// chartSchemaError is a chart whose values.schema.json refuses the values Helm renders it
// with: its problems, to be worded with the sources of the composed values.
type chartSchemaError struct {
	Chart    string
	Problems []schemaProblem
}

func (e *chartSchemaError) Error() string {
	return fmt.Sprintf("chart %s: the values break the schema:\n  %s", e.Chart, strings.Join(sourced(e.Problems, &Values{}), "\n  "))
}

// setBy returns the source of the value at path, or of its nearest parent that has one
// (a list item), or of the first leaf below it (a mapping missing a key).
func setBy(v *Values, path string) (Source, bool) {
	for p := path; p != ""; p = parentPath(p) {
		if prov, ok := v.Prov[p]; ok {
			return prov.Source, true
		}
	}
	if path == "" {
		return Source{}, false
	}
	below := v.Lookup(path)
	for _, p := range slices.Sorted(maps.Keys(below)) {
		return below[p].Source, true
	}
	return Source{}, false
}

// parentPath drops the last key or index of a path.
func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		if i := strings.LastIndex(p, "["); i >= 0 {
			return p[:i]
		}
	}
	i := strings.LastIndexAny(p, ".")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// locationPath writes a JSON instance location as a values path (lists as [i]).
func locationPath(loc []string) string {
	path := ""
	for _, k := range loc {
		if isIndex(k) && path != "" {
			path += "[" + k + "]"
			continue
		}
		path = joinPath(path, k)
	}
	return path
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
