package yamlnode

import (
	"encoding"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// obsoleteUnmarshaler is yaml.v3's older interface for values that decode themselves.
type obsoleteUnmarshaler interface {
	UnmarshalYAML(unmarshal func(any) error) error
}

var (
	unmarshalerType         = reflect.TypeFor[yaml.Unmarshaler]()
	obsoleteUnmarshalerType = reflect.TypeFor[obsoleteUnmarshaler]()
	textUnmarshalerType     = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether values of type t decode themselves from nodes.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(unmarshalerType) || p.Implements(obsoleteUnmarshalerType)
}

// unsupported reports whether a mapping or a list is decoded into t by yaml.v3 rather than
// here: arrays, interfaces with methods and structs with inline maps or with inline fields
// that decode themselves are rare enough to keep yaml.v3's cost.
func (d *decoder) unsupported(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return true
	case reflect.Interface:
		return t.NumMethod() > 0
	case reflect.Struct:
		return d.structInfo(t) == nil
	}
	return false
}

// structInfo is how the keys of a mapping map to the fields of a struct, as yaml.v3 maps
// them: a field's key is its yaml tag's name or its lowercased name; fields tagged "-" and
// unexported ones are skipped; the fields of ",inline" structs are the struct's own.
type structInfo struct {
	fields []field
	byKey  map[string]int // key -> index in fields
}

type field struct {
	key   string
	index []int // through inline structs
}

// structInfo returns the struct info of t, or nil when yaml.v3 is left to decode t.
func (d *decoder) structInfo(t reflect.Type) *structInfo {
	si, ok := d.structs[t]
	if !ok {
		si = newStructInfo(t)
		d.structs[t] = si
	}
	return si
}

func newStructInfo(t reflect.Type) *structInfo {
	si := &structInfo{byKey: map[string]int{}}
	add := func(key string, index []int) bool {
		if _, dup := si.byKey[key]; dup {
			return false // yaml.v3 rejects the type
		}
		si.byKey[key] = len(si.fields)
		si.fields = append(si.fields, field{key, index})
		return true
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.PkgPath != "" && !f.Anonymous {
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "" && !strings.Contains(string(f.Tag), ":") {
			tag = string(f.Tag)
		}
		if tag == "-" {
			continue
		}
		parts := strings.Split(tag, ",")
		inline := false
		for _, flag := range parts[1:] {
			switch flag {
			case "omitempty", "flow":
			case "inline":
				inline = true
			default:
				return nil
			}
		}
		if !inline {
			key := parts[0]
			if key == "" {
				key = strings.ToLower(f.Name)
			}
			if !add(key, []int{i}) {
				return nil
			}
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft.Kind() != reflect.Struct || decodesItself(ft) {
			return nil
		}
		inner := newStructInfo(ft)
		if inner == nil {
			return nil
		}
		for _, in := range inner.fields {
			if !add(in.key, append([]int{i}, in.index...)) {
				return nil
			}
		}
	}
	return si
}
