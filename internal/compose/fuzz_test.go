package compose_test

import (
	"encoding/json"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/compose"
)

// mergeSeeds are pairs of ConfigMap values; testdata/fuzz/FuzzMerge holds more.
var mergeSeeds = [][2]string{
	{"[{name: x, v: 1}, {name: y, v: 2}, plain]", "[{name: x, v: 9, w: 3}, {name: z}, plain]"},
	{"a: {b: 1, c: [x]}", "a: {c: [y], d: 2}"},
	{"[{a: 1}, {b: 2}]", "[{c: 3}]"},
	{"a: 1", "plain"},
	{"plain", "a: 1"},
	{"[1, 2]", "a: [1]"},
	{"'quoted: [x]'", "quoted: [y]"},
	{"", ""},
	{"a: &x [1]\nb: *x", "b: [2]"},
}

// FuzzMerge merges two parsed ConfigMap values: Merge must not panic or change its
// inputs, a scalar next always wins, mappings keep every key of both sides, lists keep the
// existing items in place, and values without lists merge with themselves to themselves.
func FuzzMerge(f *testing.F) {
	for _, s := range mergeSeeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		existing, next := compose.ParseValue(a), compose.ParseValue(b)
		existingBefore, nextBefore := clone(existing), clone(next)
		got := compose.Merge(existing, next)
		if !reflect.DeepEqual(existing, existingBefore) {
			t.Fatalf("Merge changed existing: %#v -> %#v", existingBefore, existing)
		}
		if !reflect.DeepEqual(next, nextBefore) {
			t.Fatalf("Merge changed next: %#v -> %#v", nextBefore, next)
		}
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("Merge result %#v is not JSON-encodable: %v", got, err)
		}
		if again := compose.Merge(existing, next); !reflect.DeepEqual(got, again) {
			t.Fatalf("Merge is not deterministic: %#v then %#v", got, again)
		}
		if want := referenceMerge(existing, next); !reflect.DeepEqual(got, want) {
			t.Fatalf("Merge = %#v, want %#v (item by item)", got, want)
		}
		checkMerge(t, existing, next, got)
		if !hasList(existing) {
			if self := compose.Merge(existing, existing); !reflect.DeepEqual(self, existing) {
				t.Fatalf("Merge(x, x) = %#v, want x = %#v", self, existing)
			}
		}
	})
}

// referenceMerge is Merge written item by item, as Kalypso writes it: every item of next is
// compared with every item of the list as it grows (the existing items, and those of next
// appended before it). Merge must give the same result.
func referenceMerge(existing, next any) any {
	switch e := existing.(type) {
	case map[string]any:
		n, ok := next.(map[string]any)
		if !ok {
			return next
		}
		out := maps.Clone(e)
		for k, v := range n {
			if ev, ok := out[k]; ok {
				out[k] = referenceMerge(ev, v)
			} else {
				out[k] = v
			}
		}
		return out
	case []any:
		n, ok := next.([]any)
		if !ok {
			return next
		}
		out := slices.Clone(e)
		for _, item := range n {
			m, isMap := item.(map[string]any)
			matched := false
			for i := range out {
				if em, ok := out[i].(map[string]any); ok && isMap && sameName(em["name"], m["name"]) {
					out[i] = referenceMerge(em, m)
					matched = true
				}
			}
			if !matched {
				out = append(out, item)
			}
		}
		return out
	default:
		return next
	}
}

func sameName(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(a, b)
}

func checkMerge(t *testing.T, existing, next, got any) {
	t.Helper()
	switch n := next.(type) {
	case map[string]any:
		e, ok := existing.(map[string]any)
		if !ok {
			if !reflect.DeepEqual(got, next) {
				t.Fatalf("map next did not replace %T: got %#v", existing, got)
			}
			return
		}
		g, ok := got.(map[string]any)
		if !ok {
			t.Fatalf("merging two maps gave %T", got)
		}
		for k := range e {
			if _, ok := g[k]; !ok {
				t.Fatalf("key %q of existing is missing from %#v", k, g)
			}
		}
		for k := range n {
			if _, ok := g[k]; !ok {
				t.Fatalf("key %q of next is missing from %#v", k, g)
			}
		}
		if len(g) > len(e)+len(n) {
			t.Fatalf("merged map has %d keys, more than %d + %d", len(g), len(e), len(n))
		}
	case []any:
		e, ok := existing.([]any)
		if !ok {
			if !reflect.DeepEqual(got, next) {
				t.Fatalf("list next did not replace %T: got %#v", existing, got)
			}
			return
		}
		g, ok := got.([]any)
		if !ok {
			t.Fatalf("merging two lists gave %T", got)
		}
		if len(g) < len(e) || len(g) > len(e)+len(n) {
			t.Fatalf("merged list has %d items, want between %d and %d", len(g), len(e), len(e)+len(n))
		}
		for i := range e {
			if _, isMap := e[i].(map[string]any); !isMap && !reflect.DeepEqual(g[i], e[i]) {
				t.Fatalf("existing item %d changed from %#v to %#v", i, e[i], g[i])
			}
		}
	default: // a scalar (string) always wins
		if !reflect.DeepEqual(got, next) {
			t.Fatalf("scalar next %#v did not win: got %#v", next, got)
		}
	}
}

func hasList(v any) bool {
	switch x := v.(type) {
	case []any:
		return true
	case map[string]any:
		for _, e := range x {
			if hasList(e) {
				return true
			}
		}
	}
	return false
}

// FuzzParseValue parses arbitrary ConfigMap values: ParseValue must not panic and must
// return the raw string, the unquoted string, or a deterministic JSON-compatible structure.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{
		`'a'b'`, `''x''`, "42", "true", " spaced ", "a: [b", "name: y", "", "'", "a\nb", "? a",
		"[1, 2.5, .nan, 2001-12-14]", "{1: a, 1.0: b}", "a: &n 1.5\n*n : x", "base: &b {x: 1}\nmine: {<<: *b}",
		"a: !!binary aGVsbG8=", "- - - x", "{a: {b: {c: [d]}}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := compose.ParseValue(s)
		switch x := v.(type) {
		case string:
			trimmed := strings.TrimSpace(s)
			quoted := len(trimmed) > 0 && trimmed[0] == '\'' && trimmed[len(trimmed)-1] == '\''
			if quoted && x != strings.Trim(trimmed, "'") || !quoted && x != s {
				t.Fatalf("ParseValue(%q) = %q: neither the raw nor the unquoted string", s, x)
			}
		case []any, map[string]any:
			if err := jsonCompatible(v); err != "" {
				t.Fatalf("ParseValue(%q) = %#v: %s", s, v, err)
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("ParseValue(%q) = %#v is not JSON-encodable: %v", s, v, err)
			}
		default:
			t.Fatalf("ParseValue(%q) = %T, want string, []any or map[string]any", s, v)
		}
		if again := compose.ParseValue(s); !reflect.DeepEqual(v, again) {
			t.Fatalf("ParseValue(%q) is not deterministic: %#v then %#v", s, v, again)
		}
	})
}

// jsonCompatible reports what in v is not a JSON value (maps with string keys, lists,
// strings, booleans, finite numbers, null), or "".
func jsonCompatible(v any) string {
	switch x := v.(type) {
	case nil, string, bool, int, int64, uint64:
		return ""
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "non-finite number"
		}
		return ""
	case []any:
		for _, e := range x {
			if s := jsonCompatible(e); s != "" {
				return s
			}
		}
		return ""
	case map[string]any:
		for _, e := range x {
			if s := jsonCompatible(e); s != "" {
				return s
			}
		}
		return ""
	default:
		return "unexpected " + reflect.TypeOf(v).String()
	}
}
