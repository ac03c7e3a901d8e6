package compose

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/yamlnode"
)

// ParseValue turns a ConfigMap data string into a config value, as Kalypso does:
//   - a value wrapped in single quotes (after trimming spaces) is kept as a string, with
//     every leading and trailing quote removed;
//   - a value that parses as a YAML list or mapping becomes structured ([]any or
//     map[string]any);
//   - anything else stays the original string, untouched.
//
// Unlike Kalypso, structures are parsed as YAML 1.2 (yes/no/on/off stay strings), mapping
// keys are the text as written (`1.0: x` has the key "1.0", `~: x` the key "~") and
// timestamps stay the text as written.
func ParseValue(raw string) any {
	t := strings.TrimSpace(raw)
	if len(t) > 0 && t[0] == '\'' && t[len(t)-1] == '\'' {
		return strings.Trim(t, "'")
	}
	if t == "" || (!strings.ContainsAny(t, ":-[{?!") && !strings.Contains(t, "\n")) {
		return raw // cannot be a list or a mapping
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil || len(doc.Content) == 0 {
		return raw
	}
	keepText(doc.Content[0])
	var v any
	if err := yamlnode.Decode(doc.Content[0], &v); err != nil {
		return raw
	}
	switch v.(type) {
	case map[string]any, []any, map[any]any:
		return normalize(v)
	}
	return raw
}

// keepText retags the nodes whose text must survive decoding: mapping keys (so that keys
// are always strings, as written, and two keys never collapse into one) and timestamps
// (which would otherwise become time.Time and be printed differently). Merge keys (<<)
// keep their meaning. Aliases are skipped: their anchor is visited where it is defined.
func keepText(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.ScalarNode && k.ShortTag() != "!!merge" {
				k.Tag = "!!str"
			} else {
				keepText(k)
			}
			keepText(n.Content[i+1])
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			keepText(c)
		}
	case yaml.ScalarNode:
		if n.ShortTag() == "!!timestamp" {
			n.Tag = "!!str"
		}
	}
}

// normalize converts YAML-decoded values to JSON-compatible ones (string map keys).
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	case map[any]any:
		return normalizeAnyMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64) // not representable in JSON
		}
		return x
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case []byte:
		return string(x)
	default:
		return x
	}
}

// normalizeAnyMap turns non-string keys (left only by aliased keys) into their printed form.
// Keys that print the same are resolved deterministically: in (printed, type) order, the
// last one wins.
func normalizeAnyMap(x map[any]any) map[string]any {
	type entry struct {
		key, typ string
		val      any
	}
	entries := make([]entry, 0, len(x))
	for k, e := range x {
		entries = append(entries, entry{fmt.Sprint(k), fmt.Sprintf("%T", k), e})
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].key != entries[j].key {
			return entries[i].key < entries[j].key
		}
		if entries[i].typ != entries[j].typ {
			return entries[i].typ < entries[j].typ
		}
		return fmt.Sprintf("%#v", entries[i].val) < fmt.Sprintf("%#v", entries[j].val) // NaN keys
	})
	out := make(map[string]any, len(x))
	for _, e := range entries {
		out[e.key] = normalize(e.val)
	}
	return out
}

// Merge combines a value with a higher-precedence one, as Kalypso does, without changing
// either: two mappings merge key by key (recursively); two lists merge each mapping item of
// next into every item of existing with the same `name` (a missing name equals a missing
// name) and append the items that matched nothing; in every other case next replaces
// existing.
func Merge(existing, next any) any {
	switch e := existing.(type) {
	case map[string]any:
		n, ok := next.(map[string]any)
		if !ok {
			return next
		}
		out := make(map[string]any, len(e)+len(n))
		for k, v := range e {
			out[k] = v
		}
		for k, v := range n {
			if ev, ok := out[k]; ok {
				out[k] = Merge(ev, v)
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
		return mergeLists(e, n)
	default:
		return next
	}
}

func mergeLists(existing, next []any) []any {
	out := make([]any, len(existing), len(existing)+len(next))
	copy(out, existing)
	byName := map[string][]int{} // nameKey -> the mapping items of out with that name
	for i, item := range existing {
		if m, ok := item.(map[string]any); ok {
			k := nameKey(m["name"])
			byName[k] = append(byName[k], i)
		}
	}
	for _, item := range next {
		m, isMap := item.(map[string]any)
		if isMap && mergeNamed(out, byName, m) {
			continue
		}
		if isMap { // an item appended is matched by the next ones too, as in Kalypso
			k := nameKey(m["name"])
			byName[k] = append(byName[k], len(out))
		}
		out = append(out, item)
	}
	return out
}

// mergeNamed merges m into every item of out that byName finds with m's name and reports
// whether there was one. Items merged with a list or mapping name may get a longer name:
// byName follows them.
func mergeNamed(out []any, byName map[string][]int, m map[string]any) bool {
	k := nameKey(m["name"])
	items := byName[k]
	var stay []int // items without those whose name changed, once one has
	matched := false
	for j, i := range items {
		em := out[i].(map[string]any)
		moveTo := k
		if sameName(em["name"], m["name"]) {
			merged := Merge(em, m).(map[string]any)
			out[i], matched = merged, true
			switch m["name"].(type) {
			case []any, map[string]any:
				moveTo = nameKey(merged["name"])
			}
		}
		switch {
		case moveTo != k:
			if stay == nil {
				stay = append(make([]int, 0, len(items)), items[:j]...)
			}
			byName[moveTo] = append(byName[moveTo], i)
		case stay != nil:
			stay = append(stay, i)
		}
	}
	if stay != nil {
		byName[k] = stay
	}
	return matched
}

func sameName(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return reflect.DeepEqual(a, b)
}

// nameKey returns a text that is the same for two names sameName finds equal, so that list
// items can be looked up by name. Names of types ParseValue does not make share one text.
func nameKey(v any) string {
	if s, ok := v.(string); ok { // the usual name, and no other kind of name starts with "s"
		return "s" + s
	}
	var b strings.Builder
	writeNameKey(&b, v)
	return b.String()
}

func writeNameKey(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("n;")
	case string:
		fmt.Fprintf(b, "s%d:%s", len(x), x)
	case bool:
		fmt.Fprintf(b, "b%t;", x)
	case int:
		fmt.Fprintf(b, "i%d;", x)
	case int64:
		fmt.Fprintf(b, "I%d;", x)
	case uint64:
		fmt.Fprintf(b, "u%d;", x)
	case float64:
		if x == 0 {
			x = 0 // -0 equals 0
		}
		fmt.Fprintf(b, "f%s;", strconv.FormatFloat(x, 'g', -1, 64))
	case []any:
		fmt.Fprintf(b, "l%d:", len(x))
		for _, e := range x {
			writeNameKey(b, e)
		}
	case map[string]any:
		fmt.Fprintf(b, "m%d:", len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			fmt.Fprintf(b, "%d:%s", len(k), k)
			writeNameKey(b, x[k])
		}
	default:
		b.WriteString("?;")
	}
}
