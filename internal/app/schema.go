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
	data, err := json.Marshal(v.Data)
	if err != nil {
		return []string{err.Error()}
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(data)))
	if err != nil {
		return []string{err.Error()}
	}
	err = s.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if err == nil {
		return nil
	}
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	var out []string
	for _, e := range schemacheck.Leaves(ve) {
		key := locationPath(e.InstanceLocation)
		shown := key
		if shown == "" {
			shown = "(values)"
		}
		msg := fmt.Sprintf("%s: %s (rule %s of %s)", shown, schemacheck.Message(e), schemacheck.Rule(e), s.File)
		if src, ok := setBy(v, key); ok {
			msg += "; value set in " + src.String()
		}
		out = append(out, msg)
	}
	sort.Strings(out)
	return out
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
