package render

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// builtins returns the templates fleetform ships, named builtin/<file name>.
func builtins() []*v1alpha1.Template {
	entries, err := fs.Glob(builtinFS, "builtin/*.yaml")
	if err != nil {
		panic(err)
	}
	sort.Strings(entries)
	var out []*v1alpha1.Template
	for _, e := range entries {
		data, err := builtinFS.ReadFile(e)
		if err != nil {
			panic(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		for {
			var t v1alpha1.Template
			if err := dec.Decode(&t); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				panic(fmt.Sprintf("built-in template file %s: %v", e, err))
			}
			out = append(out, &t)
		}
	}
	return out
}

// BuiltinNames lists the built-in templates with their types, for docs and `fleetform
// templates`.
func BuiltinNames() map[string]string {
	out := map[string]string{}
	for _, t := range builtins() {
		out[t.Metadata.Name] = t.Spec.Type
	}
	return out
}
