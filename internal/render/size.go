package render

import (
	"fmt"
	"reflect"
)

// sizer estimates what a value costs before a function formats, encodes or copies it:
// roughly the bytes fmt's %v writes for it (JSON and YAML are within a small factor), and
// the number of nodes (list elements, dict entries) in it. Values shared several times are
// counted every time, as the formatted output repeats them. It stops as soon as the bytes
// pass limit or the nesting passes MaxValueDepth, so it ends quickly even on a value that
// contains itself.
type sizer struct {
	limit   int
	bytes   int
	nodes   int
	tooDeep bool
}

// sizeOf walks v; ok is false when v is larger than limit or nested too deep.
func sizeOf(v any, limit int) (z sizer, ok bool) {
	z.limit = limit
	return z, z.walk(v, 0)
}

func (z *sizer) add(n int) bool {
	z.bytes += n
	return z.bytes <= z.limit
}

func (z *sizer) walk(v any, depth int) bool {
	z.nodes++
	if n, ok := scalarSize(v); ok {
		return z.add(n)
	}
	if depth >= MaxValueDepth {
		z.tooDeep = true
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		z.add(5)
		for k, e := range x {
			if !z.add(len(k)+2) || !z.walk(e, depth+1) {
				return false
			}
		}
		return true
	case []any:
		z.add(2)
		for _, e := range x {
			if !z.walk(e, depth+1) {
				return false
			}
		}
		return true
	case []string:
		for _, e := range x {
			z.nodes++
			if !z.add(len(e) + 1) {
				return false
			}
		}
		return z.add(2)
	case map[string]string:
		for k, e := range x {
			z.nodes++
			if !z.add(len(k) + len(e) + 2) {
				return false
			}
		}
		return z.add(5)
	}
	return z.walkValue(reflect.ValueOf(v), depth)
}

// scalarSize is the size of a value that holds no other values.
func scalarSize(v any) (int, bool) {
	switch x := v.(type) {
	case nil:
		return 5, true
	case string:
		return len(x) + 1, true
	case bool:
		return 5, true
	case int:
		return digits(int64(x)), true
	case int64:
		return digits(x), true
	case float64:
		return 3, true
	case []byte:
		return 4*len(x) + 2, true
	case fmt.Stringer, error:
		return 16, true // time.Time, *semver.Version, ...: small, fixed-size values
	}
	return 0, false
}

// walkValue is walk for the other types, through reflection.
func (z *sizer) walkValue(v reflect.Value, depth int) bool {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return z.add(5)
		}
		return z.walk(v.Elem().Interface(), depth+1)
	case reflect.Map:
		z.add(5)
		for it := v.MapRange(); it.Next(); {
			if !z.walk(it.Key().Interface(), depth+1) || !z.walk(it.Value().Interface(), depth+1) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		z.add(2)
		for i := range v.Len() {
			if !z.walk(v.Index(i).Interface(), depth+1) {
				return false
			}
		}
		return true
	case reflect.Struct:
		z.add(2)
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanInterface() {
				z.add(8)
				continue
			}
			if !z.walk(f.Interface(), depth+1) {
				return false
			}
		}
		return true
	case reflect.String:
		return z.add(v.Len() + 1)
	}
	return z.add(8) // numbers, bools, funcs, channels
}

func digits(n int64) int {
	d := 1
	if n < 0 {
		d++
	}
	for n >= 10 || n <= -10 {
		n /= 10
		d++
	}
	return d
}

// check walks v for a function that formats, encodes or copies it: it fails when v is
// larger than a value may be, or nested too deep.
func (st *execState) check(v any) sizer {
	z, ok := sizeOf(v, st.lim.MaxValueBytes)
	if !ok {
		if z.tooDeep {
			panic(depthError())
		}
		panic(valueError(st.lim, 0))
	}
	st.tick()
	return z
}
