// Package yamlnode decodes go.yaml.in/yaml/v3 node trees into Go values in time linear in the
// size of the tree, and writes them back as YAML with the values they hold (Encoder: the
// one encoder of the YAML files fleetform edits).
//
// yaml.v3's Node.Decode compares every key of a mapping with every other key to report
// duplicates, so decoding a mapping of n keys costs n² comparisons (seconds for 40,000 keys,
// minutes for 400,000), and the check cannot be turned off. Decode walks the tree as
// Node.Decode does and finds duplicates with a map instead. The rest is left to yaml.v3:
// scalars, values whose type decodes itself (yaml.Unmarshaler) and the few shapes Decode does
// not walk (arrays, structs with inline maps) are decoded by Node.Decode, so they resolve and
// fail exactly as they do there.
package yamlnode

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// YAML's short tags, as yaml.v3 names them.
const (
	strTag   = "!!str"
	nullTag  = "!!null"
	mapTag   = "!!map"
	seqTag   = "!!seq"
	mergeTag = "!!merge"
)

var (
	nodeType       = reflect.TypeFor[yaml.Node]()
	ifaceType      = reflect.TypeFor[any]()
	stringMapType  = reflect.TypeFor[map[string]any]()
	generalMapType = reflect.TypeFor[map[any]any]()
)

// Decode decodes n into the value v points to, with the result and the errors of
// n.Decode(v), in time linear in the size of n (aliases expanded). Where a mapping repeats a
// key, the errors name each repetition and the key's first occurrence, where yaml.v3 names
// every pair of occurrences (the first error is the same).
func Decode(n *yaml.Node, v any) error {
	out := reflect.ValueOf(v)
	if out.Kind() != reflect.Pointer || out.IsNil() {
		return n.Decode(v) // yaml.v3's own error, or its way of ignoring v
	}
	d := &decoder{
		aliases:       map[*yaml.Node]bool{},
		stringMapType: stringMapType, generalMapType: generalMapType,
		structs: map[reflect.Type]*structInfo{},
	}
	d.unmarshal(n, out.Elem())
	if d.err != nil {
		return d.err
	}
	if len(d.terrors) > 0 {
		return &yaml.TypeError{Errors: d.terrors}
	}
	return nil
}

// decoder holds the state of one Decode, as yaml.v3's decoder does. After a fatal error
// (err), it only unwinds.
type decoder struct {
	err     error
	terrors []string // type errors: decoding goes on after them

	aliases                 map[*yaml.Node]bool // aliases being expanded
	aliasDepth              int
	decodeCount, aliasCount int

	stringMapType, generalMapType reflect.Type
	// mergedFields holds the keys set while a merge (<<) is decoded: they are not set again.
	mergedFields map[any]bool

	structs map[reflect.Type]*structInfo
}

func (d *decoder) fail(format string, args ...any) bool {
	if d.err == nil {
		d.err = fmt.Errorf("yaml: "+format, args...)
	}
	return false
}

func (d *decoder) terror(n *yaml.Node, tag string, out reflect.Value) {
	if n.Tag != "" {
		tag = n.Tag
	}
	value := n.Value
	if tag != seqTag && tag != mapTag {
		if len(value) > 10 {
			value = " `" + value[:7] + "...`"
		} else {
			value = " `" + value + "`"
		}
	}
	d.terrors = append(d.terrors, fmt.Sprintf("line %d: cannot unmarshal %s%s into %s", n.Line, shortTag(tag), value, out.Type()))
}

// unmarshal decodes n into out and reports whether it set out, as yaml.v3's decoder.unmarshal.
func (d *decoder) unmarshal(n *yaml.Node, out reflect.Value) bool {
	if d.err != nil {
		return false
	}
	d.decodeCount++
	if d.aliasDepth > 0 {
		d.aliasCount++
	}
	if d.aliasCount > 100 && d.decodeCount > 1000 && float64(d.aliasCount)/float64(d.decodeCount) > allowedAliasRatio(d.decodeCount) {
		return d.fail("document contains excessive aliasing")
	}
	if out.Type() == nodeType {
		out.Set(reflect.ValueOf(n).Elem())
		return true
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return false
		}
		d.unmarshal(n.Content[0], out)
		return true
	case yaml.AliasNode:
		return d.alias(n, out)
	}
	if n.ShortTag() != nullTag { // a null is decoded into the pointer itself
		for {
			if decodesItself(out.Type()) {
				return d.delegate(n, out)
			}
			if out.Kind() != reflect.Pointer {
				break
			}
			if out.IsNil() {
				out.Set(reflect.New(out.Type().Elem()))
			}
			out = out.Elem()
		}
	}
	switch n.Kind {
	case yaml.MappingNode:
		if d.unsupported(out.Type()) {
			return d.delegate(n, out)
		}
		return d.mapping(n, out)
	case yaml.SequenceNode:
		if d.unsupported(out.Type()) {
			return d.delegate(n, out)
		}
		return d.sequence(n, out)
	default:
		return d.scalar(n, out)
	}
}

func (d *decoder) alias(n *yaml.Node, out reflect.Value) bool {
	if d.aliases[n] {
		return d.fail("anchor '%s' value contains itself", n.Value)
	}
	d.aliases[n] = true
	d.aliasDepth++
	good := d.unmarshal(n.Alias, out)
	d.aliasDepth--
	delete(d.aliases, n)
	return good
}

// scalar decodes a scalar: plain strings here, anything else through yaml.v3.
func (d *decoder) scalar(n *yaml.Node, out reflect.Value) bool {
	if n.Kind == yaml.ScalarNode && n.Tag == strTag {
		switch {
		case out.Kind() == reflect.String && !reflect.PointerTo(out.Type()).Implements(textUnmarshalerType):
			out.SetString(n.Value)
			return true
		case out.Type() == ifaceType:
			out.Set(reflect.ValueOf(n.Value))
			return true
		}
	}
	if !d.delegate(n, out) {
		return false
	}
	if n.ShortTag() == nullTag {
		// yaml.v3 reports a null as set only where it can store one.
		switch out.Kind() {
		case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
			return true
		}
		return false
	}
	return true
}

// delegate decodes n into out with yaml.v3 and reports whether it set out.
func (d *decoder) delegate(n *yaml.Node, out reflect.Value) bool {
	err := n.Decode(out.Addr().Interface())
	var te *yaml.TypeError
	switch {
	case err == nil:
		return true
	case errors.As(err, &te):
		d.terrors = append(d.terrors, te.Errors...)
		return false
	default:
		if d.err == nil {
			d.err = err
		}
		return false
	}
}

// duplicates records a type error for every key of mapping n that repeats an earlier one
// (the same kind and text, as yaml.v3 compares them) and reports whether there was one.
func (d *decoder) duplicates(n *yaml.Node) bool {
	type key struct {
		kind  yaml.Kind
		value string
	}
	l := len(n.Content)
	if l <= 2 {
		return false
	}
	first := make(map[key]int, l/2) // index of a key's first occurrence
	var repeats map[int][]int       // first occurrence -> the later ones, in order
	for i := 0; i < l; i += 2 {
		k := key{n.Content[i].Kind, n.Content[i].Value}
		f, seen := first[k]
		if !seen {
			first[k] = i
			continue
		}
		if repeats == nil {
			repeats = map[int][]int{}
		}
		repeats[f] = append(repeats[f], i)
	}
	if repeats == nil {
		return false
	}
	for i := 0; i < l; i += 2 { // in the order yaml.v3 reports them
		for _, j := range repeats[i] {
			ni, nj := n.Content[i], n.Content[j]
			d.terrors = append(d.terrors, fmt.Sprintf("line %d: mapping key %#v already defined at line %d", nj.Line, nj.Value, ni.Line))
		}
	}
	return true
}

func (d *decoder) mapping(n *yaml.Node, out reflect.Value) bool {
	if d.duplicates(n) {
		return false
	}
	switch out.Kind() {
	case reflect.Struct:
		return d.mappingStruct(n, out)
	case reflect.Map:
	case reflect.Interface:
		iface := out
		if isStringMap(n) {
			out = reflect.MakeMapWithSize(d.stringMapType, len(n.Content)/2)
		} else {
			out = reflect.MakeMapWithSize(d.generalMapType, len(n.Content)/2)
		}
		iface.Set(out)
	default:
		d.terror(n, mapTag, out)
		return false
	}
	outt := out.Type()
	stringMapType, generalMapType := d.stringMapType, d.generalMapType
	if outt.Elem() == ifaceType {
		if outt.Key().Kind() == reflect.String {
			d.stringMapType = outt
		} else if outt.Key() == ifaceType {
			d.generalMapType = outt
		}
	}
	mergedFields := d.mergedFields
	d.mergedFields = nil
	var mergeNode *yaml.Node
	mapIsNew := out.IsNil()
	if mapIsNew {
		out.Set(reflect.MakeMapWithSize(outt, len(n.Content)/2))
	}
	for i := 0; i+1 < len(n.Content) && d.err == nil; i += 2 {
		if isMerge(n.Content[i]) {
			mergeNode = n.Content[i+1]
			continue
		}
		d.mapEntry(n.Content[i], n.Content[i+1], out, mergedFields, mapIsNew)
	}
	d.mergedFields = mergedFields
	if mergeNode != nil {
		d.merge(n, mergeNode, out)
	}
	d.stringMapType, d.generalMapType = stringMapType, generalMapType
	return true
}

// mapEntry decodes one key and value into map out, unless a merge already set the key.
func (d *decoder) mapEntry(kn, vn *yaml.Node, out reflect.Value, mergedFields map[any]bool, mapIsNew bool) {
	k := reflect.New(out.Type().Key()).Elem()
	if !d.unmarshal(kn, k) {
		return
	}
	if mergedFields != nil {
		ki := k.Interface()
		if d.isMerged(mergedFields, ki) {
			return
		}
		d.setMerged(mergedFields, ki)
	}
	kkind := k.Kind()
	if kkind == reflect.Interface {
		kkind = k.Elem().Kind()
	}
	if kkind == reflect.Map || kkind == reflect.Slice {
		d.fail("invalid map key: %#v", k.Interface())
		return
	}
	e := reflect.New(out.Type().Elem()).Elem()
	if d.unmarshal(vn, e) || vn.ShortTag() == nullTag && (mapIsNew || !out.MapIndex(k).IsValid()) {
		out.SetMapIndex(k, e)
	}
}

func (d *decoder) mappingStruct(n *yaml.Node, out reflect.Value) bool {
	sinfo := d.structInfo(out.Type())
	mergedFields := d.mergedFields
	d.mergedFields = nil
	var mergeNode *yaml.Node
	done := make([]bool, len(sinfo.fields))
	name := reflect.New(reflect.TypeFor[string]()).Elem()
	for i := 0; i+1 < len(n.Content) && d.err == nil; i += 2 {
		ni := n.Content[i]
		if isMerge(ni) {
			mergeNode = n.Content[i+1]
			continue
		}
		if !d.unmarshal(ni, name) {
			continue
		}
		sname := name.String()
		if mergedFields != nil {
			if mergedFields[sname] {
				continue
			}
			mergedFields[sname] = true
		}
		id, ok := sinfo.byKey[sname]
		if !ok {
			continue // Node.Decode ignores unknown fields
		}
		if done[id] {
			d.terrors = append(d.terrors, fmt.Sprintf("line %d: field %s already set in type %s", ni.Line, sname, out.Type()))
			continue
		}
		done[id] = true
		d.unmarshal(n.Content[i+1], fieldByIndex(out, sinfo.fields[id].index))
	}
	d.mergedFields = mergedFields
	if mergeNode != nil {
		d.merge(n, mergeNode, out)
	}
	return true
}

// fieldByIndex returns the field at index (through inline structs), allocating the pointers
// on the way.
func fieldByIndex(v reflect.Value, index []int) reflect.Value {
	for _, num := range index {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(num)
	}
	return v
}

// merge decodes the mappings of a merge key (<<) into out, without setting the keys parent
// sets itself or that an earlier mapping of the merge set.
func (d *decoder) merge(parent, merge *yaml.Node, out reflect.Value) {
	mergedFields := d.mergedFields
	if mergedFields == nil {
		d.mergedFields = map[any]bool{}
		for i := 0; i+1 < len(parent.Content); i += 2 {
			k := reflect.New(ifaceType).Elem()
			if d.unmarshal(parent.Content[i], k) {
				d.setMerged(d.mergedFields, k.Interface())
			}
		}
	}
	switch merge.Kind {
	case yaml.MappingNode:
		d.unmarshal(merge, out)
	case yaml.AliasNode:
		if merge.Alias != nil && merge.Alias.Kind != yaml.MappingNode {
			d.failWantMap()
			break
		}
		d.unmarshal(merge, out)
	case yaml.SequenceNode:
		for _, ni := range merge.Content {
			if ni.Kind == yaml.AliasNode {
				if ni.Alias != nil && ni.Alias.Kind != yaml.MappingNode {
					d.failWantMap()
					break
				}
			} else if ni.Kind != yaml.MappingNode {
				d.failWantMap()
				break
			}
			d.unmarshal(ni, out)
		}
	default:
		d.failWantMap()
	}
	d.mergedFields = mergedFields
}

func (d *decoder) failWantMap() {
	d.fail("map merge requires map or sequence of maps as the value")
}

// isMerged and setMerged use a decoded key as a map key, failing as yaml.v3 does on keys
// that cannot be.
func (d *decoder) isMerged(m map[any]bool, key any) (merged bool) {
	defer func() {
		if r := recover(); r != nil {
			d.fail("%v", r)
		}
	}()
	return m[key]
}

func (d *decoder) setMerged(m map[any]bool, key any) {
	defer func() {
		if r := recover(); r != nil {
			d.fail("%v", r)
		}
	}()
	m[key] = true
}

func (d *decoder) sequence(n *yaml.Node, out reflect.Value) bool {
	l := len(n.Content)
	var iface reflect.Value
	switch out.Kind() {
	case reflect.Slice:
		out.Set(reflect.MakeSlice(out.Type(), l, l))
	case reflect.Interface:
		iface = out
		out = reflect.New(reflect.TypeFor[[]any]()).Elem()
		out.Set(reflect.ValueOf(make([]any, l)))
	default:
		d.terror(n, seqTag, out)
		return false
	}
	et := out.Type().Elem()
	j := 0
	for i := 0; i < l && d.err == nil; i++ {
		e := reflect.New(et).Elem()
		if d.unmarshal(n.Content[i], e) {
			out.Index(j).Set(e)
			j++
		}
	}
	out.Set(out.Slice(0, j))
	if iface.IsValid() {
		iface.Set(out)
	}
	return true
}

func isStringMap(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if t := n.Content[i].ShortTag(); t != strTag && t != mergeTag {
			return false
		}
	}
	return true
}

func isMerge(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "<<" && (n.Tag == "" || n.Tag == "!" || shortTag(n.Tag) == mergeTag)
}

func shortTag(tag string) string {
	if rest, ok := strings.CutPrefix(tag, "tag:yaml.org,2002:"); ok {
		return "!!" + rest
	}
	return tag
}

// allowedAliasRatio is yaml.v3's bound on the share of decoding done through aliases.
func allowedAliasRatio(decodeCount int) float64 {
	const low, high = 400_000, 4_000_000
	switch {
	case decodeCount <= low:
		return 0.99
	case decodeCount >= high:
		return 0.10
	default:
		return 0.99 - 0.89*(float64(decodeCount-low)/float64(high-low))
	}
}
