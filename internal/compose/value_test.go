package compose_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/compose"
)

func TestParseValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  string
		want any
	}{
		// Reference 3.3: single quotes force a string; every leading and trailing quote goes.
		{name: "quoted with inner quote", raw: `'a'b'`, want: `a'b`},
		{name: "doubly quoted", raw: `''x''`, want: "x"},
		{name: "quoted after trimming", raw: " 'x' ", want: "x"},
		{name: "quoted with tab and newline around", raw: "\t'x'\n", want: "x"},
		{name: "quoted spaces kept", raw: `'  '`, want: "  "},
		{name: "quoted structure stays a string", raw: `'a: [1, 2]'`, want: "a: [1, 2]"},
		{name: "only one quote", raw: `'`, want: ""},
		{name: "only quotes", raw: `'''`, want: ""},
		{name: "quote at one end only", raw: `'abc`, want: `'abc`},

		// Scalars and parse errors keep the raw string, untouched.
		{name: "integer stays string", raw: "42", want: "42"},
		{name: "negative integer stays string", raw: "-1", want: "-1"},
		{name: "boolean stays string", raw: "true", want: "true"},
		{name: "yaml 1.1 boolean stays string", raw: "yes", want: "yes"},
		{name: "spaces kept", raw: " spaced ", want: " spaced "},
		{name: "unterminated flow", raw: "a: [b", want: "a: [b"},
		{name: "url", raw: "mysql://west:8806/mysql2", want: "mysql://west:8806/mysql2"},
		{name: "empty", raw: "", want: ""},
		{name: "blank", raw: "   ", want: "   "},
		{name: "lone colon", raw: ":", want: ":"},
		{name: "multi-line scalar", raw: "a\nb", want: "a\nb"},
		{name: "multi-line with tab error", raw: "x: y\n\t z", want: "x: y\n\t z"},
		{name: "undefined alias", raw: "*a", want: "*a"},
		{name: "null", raw: "~", want: "~"},
		{name: "duplicate keys", raw: "{a: 1, a: 2}", want: "{a: 1, a: 2}"},

		// Lists and mappings are structured.
		{name: "flow list", raw: "[a, b]", want: []any{"a", "b"}},
		{name: "block list", raw: "- a\n- b\n", want: []any{"a", "b"}},
		{name: "flow map", raw: "{a: 1, b: x}", want: map[string]any{"a": 1, "b": "x"}},
		{name: "block map", raw: "a: 1\nb:\n  c: [x]\n", want: map[string]any{"a": 1, "b": map[string]any{"c": []any{"x"}}}},
		{name: "empty map", raw: "{}", want: map[string]any{}},
		{name: "empty list", raw: "[]", want: []any{}},
		{name: "map with null value", raw: "a:", want: map[string]any{"a": nil}},
		{name: "list of null", raw: "-", want: []any{nil}},
		{name: "comment dropped", raw: "key: value # note", want: map[string]any{"key": "value"}},
		{name: "first document only", raw: "a: 1\n---\nb: 2", want: map[string]any{"a": 1}},
		{name: "anchors resolved", raw: "a: &x [1]\nb: *x", want: map[string]any{"a": []any{1}, "b": []any{1}}},
		{name: "explicit key", raw: "? a", want: map[string]any{"a": nil}},

		// YAML 1.2, a deliberate difference from Kalypso's YAML 1.1 (`name: y` -> true there).
		{name: "yaml 1.2 y", raw: "name: y", want: map[string]any{"name": "y"}},
		{name: "yaml 1.2 on/off keys and values", raw: "{on: off, yes: no}", want: map[string]any{"on": "off", "yes": "no"}},
		{name: "typed scalars inside structures", raw: "[1, 2.5, true, null, x]", want: []any{1, 2.5, true, nil, "x"}},
		{name: "nan is not json", raw: "[.nan, .inf]", want: []any{"NaN", "+Inf"}},

		// Structured values are JSON: keys are the text as written, timestamps stay text.
		{name: "timestamp kept as written", raw: "date: 2001-12-14", want: map[string]any{"date": "2001-12-14"}},
		{name: "timestamp in list kept as written", raw: "[2001-12-14 21:59:43.10 -5]", want: []any{"2001-12-14 21:59:43.10 -5"}},
		{name: "numeric keys as written", raw: "{1: a, 1.0: b}", want: map[string]any{"1": "a", "1.0": "b"}},
		{name: "octal-looking keys as written", raw: "{1: a, 01: b}", want: map[string]any{"1": "a", "01": "b"}},
		{name: "aliased key printed", raw: "a: &n 1.5\n*n : x", want: map[string]any{"a": 1.5, "1.5": "x"}},
		{name: "merge key keeps its meaning", raw: "base: &b {x: 1}\nmine:\n  <<: *b\n  y: 2", want: map[string]any{
			"base": map[string]any{"x": 1}, "mine": map[string]any{"x": 1, "y": 2},
		}},
		{name: "boolean and null keys as written", raw: "{true: a, ~: b}", want: map[string]any{"true": "a", "~": "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := compose.ParseValue(tt.raw)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseValue(%q) mismatch (-want +got):\n%s", tt.raw, diff)
			}
			if _, err := json.Marshal(got); err != nil {
				t.Errorf("ParseValue(%q) = %#v is not JSON-encodable: %v", tt.raw, got, err)
			}
		})
	}
}

// TestParseValueFreshValues checks that two parses of the same text share nothing, so a
// caller changing one cannot change the other.
func TestParseValueFreshValues(t *testing.T) {
	t.Parallel()
	a := compose.ParseValue("a: [1]").(map[string]any)
	b := compose.ParseValue("a: [1]").(map[string]any)
	a["a"].([]any)[0] = "changed"
	if diff := cmp.Diff(map[string]any{"a": []any{1}}, b); diff != "" {
		t.Errorf("second parse changed (-want +got):\n%s", diff)
	}
}

func TestMerge(t *testing.T) {
	t.Parallel()
	type m = map[string]any
	type l = []any
	tests := []struct {
		name           string
		existing, next any
		want           any
	}{
		{
			name:     "reference example",
			existing: l{m{"name": "x", "v": 1}, m{"name": "y", "v": 2}, "plain"},
			next:     l{m{"name": "x", "v": 9, "w": 3}, m{"name": "z"}, "plain"},
			want:     l{m{"name": "x", "v": 9, "w": 3}, m{"name": "y", "v": 2}, "plain", m{"name": "z"}, "plain"},
		},
		{
			name:     "name-less maps merge into every name-less map",
			existing: l{m{"a": 1}, m{"name": "x"}, m{"b": 2}},
			next:     l{m{"c": 3}},
			want:     l{m{"a": 1, "c": 3}, m{"name": "x"}, m{"b": 2, "c": 3}},
		},
		{
			name:     "a named map merges into every map of that name",
			existing: l{m{"name": "x", "a": 1}, m{"name": "x", "b": 2}},
			next:     l{m{"name": "x", "c": 3}},
			want:     l{m{"name": "x", "a": 1, "c": 3}, m{"name": "x", "b": 2, "c": 3}},
		},
		{
			name:     "names compare by value and type",
			existing: l{m{"name": 1, "a": 1}},
			next:     l{m{"name": "1", "b": 2}, m{"name": 1, "c": 3}},
			want:     l{m{"name": 1, "a": 1, "c": 3}, m{"name": "1", "b": 2}},
		},
		{
			name:     "structured names compare deeply",
			existing: l{m{"name": m{"k": "v"}, "a": 1}},
			next:     l{m{"name": m{"k": "v"}, "b": 2}},
			want:     l{m{"name": m{"k": "v"}, "a": 1, "b": 2}},
		},
		{
			name:     "a list name grows when merged; the item is then found by its new name",
			existing: l{m{"name": l{"x"}, "a": 1}},
			next:     l{m{"name": l{"x"}, "b": 2}, m{"name": l{"x"}, "c": 3}, m{"name": l{"x", "x"}, "d": 4}},
			want:     l{m{"name": l{"x", "x", "x", "x"}, "a": 1, "b": 2, "d": 4}, m{"name": l{"x"}, "c": 3}},
		},
		{
			name:     "numeric names: 0 and -0 are one name, 1 and 1.0 are two",
			existing: l{m{"name": 0.0, "a": 1}, m{"name": 1, "b": 2}},
			next:     l{m{"name": math.Copysign(0, -1), "c": 3}, m{"name": 1.0, "d": 4}},
			want:     l{m{"name": math.Copysign(0, -1), "a": 1, "c": 3}, m{"name": 1, "b": 2}, m{"name": 1.0, "d": 4}},
		},
		{
			// Kalypso matches each new item against the list as it grows (its loop runs over
			// the existing list with the items appended so far).
			name:     "an item appended is matched by the next ones",
			existing: l{m{"name": "base"}},
			next:     l{m{"name": "z", "a": 1}, m{"name": "z", "b": 2}, "s", "s"},
			want:     l{m{"name": "base"}, m{"name": "z", "a": 1, "b": 2}, "s", "s"},
		},
		{
			name:     "lists inside matched items merge recursively",
			existing: l{m{"name": "x", "ports": l{m{"name": "http", "port": 80}}}},
			next:     l{m{"name": "x", "ports": l{m{"name": "http", "port": 8080}, m{"name": "grpc"}}}},
			want:     l{m{"name": "x", "ports": l{m{"name": "http", "port": 8080}, m{"name": "grpc"}}}},
		},
		{
			name:     "duplicated scalars are appended",
			existing: l{"a", "b"},
			next:     l{"b", "c"},
			want:     l{"a", "b", "b", "c"},
		},
		{
			name:     "maps merge recursively",
			existing: m{"a": m{"b": 1, "c": m{"d": 1}}, "e": 1},
			next:     m{"a": m{"c": m{"f": 2}}, "g": 2},
			want:     m{"a": m{"b": 1, "c": m{"d": 1, "f": 2}}, "e": 1, "g": 2},
		},
		{
			name:     "scalar replaces map inside a map",
			existing: m{"a": m{"b": 1}},
			next:     m{"a": "flat"},
			want:     m{"a": "flat"},
		},
		{name: "scalar replaces scalar", existing: "old", next: "new", want: "new"},
		{name: "map replaces scalar", existing: "old", next: m{"a": 1}, want: m{"a": 1}},
		{name: "scalar replaces map", existing: m{"a": 1}, next: "new", want: "new"},
		{name: "list replaces map", existing: m{"a": 1}, next: l{"x"}, want: l{"x"}},
		{name: "map replaces list", existing: l{"x"}, next: m{"a": 1}, want: m{"a": 1}},
		{name: "scalar replaces list", existing: l{"x"}, next: "new", want: "new"},
		{name: "null replaces anything", existing: m{"a": 1}, next: nil, want: nil},
		{name: "anything replaces null", existing: nil, next: l{"x"}, want: l{"x"}},
		{name: "empty map keeps existing keys", existing: m{"a": 1}, next: m{}, want: m{"a": 1}},
		{name: "empty list keeps existing items", existing: l{"a"}, next: l{}, want: l{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			existing, next := clone(tt.existing), clone(tt.next)
			got := compose.Merge(existing, next)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Merge mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.existing, existing); diff != "" {
				t.Errorf("Merge changed existing (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(tt.next, next); diff != "" {
				t.Errorf("Merge changed next (-before +after):\n%s", diff)
			}
		})
	}
}

// TestMergeParsedValues merges values as they come from ConfigMaps, in both orders.
func TestMergeParsedValues(t *testing.T) {
	t.Parallel()
	low := compose.ParseValue("resources:\n  limits: {cpu: 1, memory: 1Gi}\nsidecars:\n  - name: log\n    image: log:1\n")
	high := compose.ParseValue("resources:\n  limits: {cpu: 2}\nsidecars:\n  - name: log\n    image: log:2\n  - name: trace\n")
	want := map[string]any{
		"resources": map[string]any{"limits": map[string]any{"cpu": 2, "memory": "1Gi"}},
		"sidecars":  []any{map[string]any{"name": "log", "image": "log:2"}, map[string]any{"name": "trace"}},
	}
	if diff := cmp.Diff(want, compose.Merge(low, high)); diff != "" {
		t.Errorf("Merge(low, high) mismatch (-want +got):\n%s", diff)
	}
}

// clone deep-copies a value made of maps, lists and scalars.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = clone(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = clone(e)
		}
		return out
	default:
		return v
	}
}
