package render

import (
	"fmt"
	"reflect"
	"text/template/parse"
)

// Function calls of the fast executor. Each call site is compiled once for the function it
// names: its arguments evaluated as text/template evaluates them for the function's
// parameter types, and the function called directly when its signature is a common one
// (reflect.Value.Call otherwise). A reflect.Value parameter is given the argument's value
// itself, as text/template gives it.

// call compiles a call of the function name with args, after the value piped into it when
// piped is set.
func (c *fastCompiler) call(name string, args []parse.Node, piped bool) fastCommand {
	if fn, ok := c.funcs.lookup(name); ok {
		return c.funcCall(name, fn, args, piped)
	}
	n := len(args)
	if piped {
		n++
	}
	a := c.rawArgs(args)
	switch name { // text/template's builtins the engine's function set does not replace
	case "and", "or":
		if n == 0 {
			unsupported("%s without arguments", name)
		}
		return andOr(name == "or", a, piped)
	case "not", "len":
		if n != 1 {
			unsupported("%s with %d arguments", name, n)
		}
		if name == "len" {
			return lengthOf(a)
		}
		return func(x *fastExec, dot, final reflect.Value) reflect.Value {
			return boolValue(!truth(a.value(x, dot, final, 0)))
		}
	case "index":
		if n == 0 {
			unsupported("index without arguments")
		}
		return indexOf(a, n)
	case "eq", "ne", "lt", "le", "gt", "ge":
		if n < 2 || n > 2 && name != "eq" {
			unsupported("%s with %d arguments", name, n)
		}
		return compare(name, a, n)
	}
	unsupported("function %s", name)
	return nil
}

// indexOf is text/template's index of n arguments.
func indexOf(a rawArgList, n int) fastCommand {
	return func(x *fastExec, dot, final reflect.Value) reflect.Value {
		item := a.value(x, dot, final, 0)
		for i := 1; i < n; i++ {
			var err error
			if item, err = indexOnce(item, a.value(x, dot, final, i)); err != nil {
				fastStop()
			}
		}
		if n == 1 {
			if item = indirectInterface(item); !item.IsValid() {
				fastStop() // index of untyped nil
			}
		}
		return item
	}
}

// lengthOf is text/template's len.
func lengthOf(a rawArgList) fastCommand {
	return func(x *fastExec, dot, final reflect.Value) reflect.Value {
		item, isNil := indirect(a.value(x, dot, final, 0))
		if isNil {
			fastStop()
		}
		switch item.Kind() {
		case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
			return reflect.ValueOf(item.Len())
		}
		fastStop()
		return reflect.Value{}
	}
}

// compare is text/template's eq (of n arguments: the first equals any other), ne, lt, le,
// gt or ge.
func compare(name string, a rawArgList, n int) fastCommand {
	test := map[string]func(l, r reflect.Value) bool{
		"eq": equal,
		"ne": func(l, r reflect.Value) bool { return !equal(l, r) },
		"lt": less,
		"le": func(l, r reflect.Value) bool { return less(l, r) || equal(l, r) },
		"gt": func(l, r reflect.Value) bool { return !less(l, r) && !equal(l, r) },
		"ge": func(l, r reflect.Value) bool { return !less(l, r) },
	}[name]
	vals := make([]reflect.Value, n) // this call site's own, as argv in funcCall
	return func(x *fastExec, dot, final reflect.Value) reflect.Value {
		for i := range vals { // every argument first, as text/template evaluates them
			vals[i] = a.value(x, dot, final, i)
		}
		defer clear(vals)
		for _, v := range vals[1:] { // more than one only for eq: true when any matches
			if test(vals[0], v) {
				return trueValue
			}
		}
		return falseValue
	}
}

// rawArgList evaluates arguments given to reflect.Value parameters: their values as they are.
type rawArgList struct {
	args []fastArg
}

func (c *fastCompiler) rawArgs(args []parse.Node) rawArgList {
	out := rawArgList{args: make([]fastArg, len(args))}
	for i, a := range args {
		out.args[i] = c.rawArg(a)
	}
	return out
}

// value is argument i; the one after the explicit arguments is the piped value.
func (a rawArgList) value(x *fastExec, dot, final reflect.Value, i int) reflect.Value {
	if i < len(a.args) {
		return a.args[i](x, dot)
	}
	return final
}

// rawArg compiles an argument of a reflect.Value parameter.
func (c *fastCompiler) rawArg(n parse.Node) fastArg {
	switch n.(type) {
	case *parse.DotNode, *parse.FieldNode, *parse.VariableNode, *parse.PipeNode,
		*parse.StringNode, *parse.BoolNode, *parse.NumberNode:
		return c.arg(n)
	}
	unsupported("argument %s", n)
	return nil
}

// andOr is text/template's and (or): the first argument that is false (true), evaluated in
// order, else the last one.
func andOr(isOr bool, a rawArgList, piped bool) fastCommand {
	return func(x *fastExec, dot, final reflect.Value) reflect.Value {
		var v reflect.Value
		for i := range a.args {
			if v = a.args[i](x, dot); truth(v) == isOr {
				return v
			}
		}
		if piped {
			v = final
		}
		return v
	}
}

// indexOnce is item[index] as text/template's index takes it.
func indexOnce(item, index reflect.Value) (reflect.Value, error) {
	item = indirectInterface(item)
	if !item.IsValid() {
		return reflect.Value{}, fmt.Errorf("index of untyped nil")
	}
	index = indirectInterface(index)
	item, isNil := indirect(item)
	if isNil {
		return reflect.Value{}, fmt.Errorf("index of nil pointer")
	}
	switch item.Kind() {
	case reflect.Array, reflect.Slice, reflect.String:
		x, err := indexArg(index, item.Len())
		if err != nil {
			return reflect.Value{}, err
		}
		return item.Index(x), nil
	case reflect.Map:
		key, err := prepareArg(index, item.Type().Key())
		if err != nil {
			return reflect.Value{}, err
		}
		if v := item.MapIndex(key); v.IsValid() {
			return v, nil
		}
		return reflect.Zero(item.Type().Elem()), nil
	}
	return reflect.Value{}, fmt.Errorf("can't index item of type %s", item.Type())
}

func indexArg(index reflect.Value, limit int) (int, error) {
	var x int64
	switch index.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x = index.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		x = int64(index.Uint()) //nolint:gosec // checked below, as text/template does
	default:
		return 0, fmt.Errorf("cannot index with %v", index)
	}
	if x < 0 || int(x) < 0 || int(x) > limit {
		return 0, fmt.Errorf("index out of range: %d", x)
	}
	return int(x), nil
}

func prepareArg(value reflect.Value, argType reflect.Type) (reflect.Value, error) {
	if !value.IsValid() {
		if !canBeNil(argType) {
			return reflect.Value{}, fmt.Errorf("value is nil; should be of type %s", argType)
		}
		value = reflect.Zero(argType)
	}
	if value.Type().AssignableTo(argType) {
		return value, nil
	}
	if intLike(value.Kind()) && intLike(argType.Kind()) && value.Type().ConvertibleTo(argType) {
		return value.Convert(argType), nil
	}
	return reflect.Value{}, fmt.Errorf("value has type %s; should be %s", value.Type(), argType)
}

func intLike(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

// funcCall compiles a call of fn, a function of the engine's set.
func (c *fastCompiler) funcCall(name string, fn any, args []parse.Node, piped bool) fastCommand {
	typ := reflect.TypeOf(fn)
	if typ.Kind() != reflect.Func {
		unsupported("%s is not a function", name)
	}
	switch {
	case typ.NumOut() == 1:
	case typ.NumOut() == 2 && typ.Out(1) == errorType:
	default:
		unsupported("function %s returns %d values", name, typ.NumOut())
	}
	numIn, numFixed := len(args), typ.NumIn()
	if piped {
		numIn++
	}
	if typ.IsVariadic() {
		numFixed--
		if numIn < numFixed {
			unsupported("%s with %d arguments", name, numIn)
		}
	} else if numIn != numFixed {
		unsupported("%s with %d arguments", name, numIn)
	}
	paramType := func(i int) reflect.Type {
		if i < numFixed {
			return typ.In(i)
		}
		return typ.In(typ.NumIn() - 1).Elem()
	}
	compiled := make([]fastArg, len(args))
	for i, a := range args {
		if t := paramType(i); t == reflectValueType {
			compiled[i] = c.rawArg(a)
		} else {
			compiled[i] = c.typedArg(a, t)
		}
	}
	var finalType reflect.Type
	if piped {
		finalType = paramType(numIn - 1)
	}
	argv := make([]reflect.Value, numIn) // this call site's own: an execContext runs one manifest at a time
	invoke := invoker(fn, numFixed)
	return func(x *fastExec, dot, final reflect.Value) reflect.Value {
		for i, a := range compiled {
			argv[i] = a(x, dot)
		}
		if piped {
			if finalType == reflectValueType {
				argv[numIn-1] = final
			} else {
				argv[numIn-1] = validateType(final, finalType)
			}
		}
		v := invoke(argv)
		clear(argv)
		return v
	}
}

// invoker calls fn with arguments already of its parameter types (reflect.Value
// parameters get the values themselves), and returns its result as text/template takes it;
// a function's error stops the executor.
func invoker(fn any, numFixed int) func(argv []reflect.Value) reflect.Value {
	if f := stringInvoker(fn); f != nil {
		return f
	}
	switch f := fn.(type) {
	case func(string, string) bool:
		return func(a []reflect.Value) reflect.Value { return boolValue(f(a[0].String(), a[1].String())) }
	case func(string, string) (bool, error):
		return func(a []reflect.Value) reflect.Value { return boolValue(must(f(a[0].String(), a[1].String()))) }
	case func(string, any) bool:
		return func(a []reflect.Value) reflect.Value { return boolValue(f(a[0].String(), a[1].Interface())) }
	case func(any, any) bool:
		return func(a []reflect.Value) reflect.Value { return boolValue(f(a[0].Interface(), a[1].Interface())) }
	case func(any) bool:
		return func(a []reflect.Value) reflect.Value { return boolValue(f(a[0].Interface())) }
	case func(any) any:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].Interface())) }
	case func(any, ...any) any:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].Interface(), anys(a[1:])...)) }
	case func(any) []string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].Interface())) }
	case func(...any) []any:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(anys(a)...)) }
	case func(reflect.Value) reflect.Value:
		return func(a []reflect.Value) reflect.Value { return f(a[0]) }
	}
	return reflectInvoker(fn, numFixed)
}

// stringInvoker is invoker for the common functions that make a string (nil for others).
func stringInvoker(fn any) func(argv []reflect.Value) reflect.Value {
	switch f := fn.(type) {
	case func(string) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].String())) }
	case func(any) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].Interface())) }
	case func(...any) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(anys(a)...)) }
	case func(string, ...any) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].String(), anys(a[1:])...)) }
	case func(int, string) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(int(a[0].Int()), a[1].String())) }
	case func(string, string) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].String(), a[1].String())) }
	case func(string) (string, error):
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(must(f(a[0].String()))) }
	case func(*Data) string:
		return func(a []reflect.Value) reflect.Value { return reflect.ValueOf(f(a[0].Interface().(*Data))) }
	}
	return nil
}

// reflectInvoker is invoker for any other function, through reflect.Value.Call.
func reflectInvoker(fn any, numFixed int) func(argv []reflect.Value) reflect.Value {
	fv := reflect.ValueOf(fn)
	typ := fv.Type()
	return func(a []reflect.Value) reflect.Value {
		in := make([]reflect.Value, len(a))
		for i, v := range a {
			if i >= numFixed && typ.IsVariadic() {
				if typ.In(typ.NumIn()-1).Elem() == reflectValueType {
					v = reflect.ValueOf(v)
				}
			} else if typ.In(i) == reflectValueType {
				v = reflect.ValueOf(v)
			}
			in[i] = v
		}
		out := fv.Call(in)
		if len(out) == 2 && !out[1].IsNil() {
			fastStop()
		}
		if out[0].Type() == reflectValueType {
			return out[0].Interface().(reflect.Value)
		}
		return out[0]
	}
}

// anys are arguments of an ...any parameter.
func anys(a []reflect.Value) []any {
	out := make([]any, len(a))
	for i, v := range a {
		out[i] = v.Interface()
	}
	return out
}

func boolValue(b bool) reflect.Value {
	if b {
		return trueValue
	}
	return falseValue
}

// must is a function's result, or stops the executor on its error.
func must[T any](v T, err error) T {
	if err != nil {
		fastStop()
	}
	return v
}

// comparable is the kind of value text/template compares: 0 for none.
type comparable uint8

const (
	cmpNone comparable = iota
	cmpBool
	cmpInt
	cmpUint
	cmpFloat
	cmpString
)

func comparableKind(v reflect.Value) comparable {
	switch v.Kind() {
	case reflect.Bool:
		return cmpBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return cmpInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return cmpUint
	case reflect.Float32, reflect.Float64:
		return cmpFloat
	case reflect.String:
		return cmpString
	}
	return cmpNone
}

// equal is text/template's eq of two values of basic kinds, or of an absent value and
// another; anything else (which text/template compares by other rules, or refuses) stops
// the executor.
func equal(a, b reflect.Value) bool {
	a, b = indirectInterface(a), indirectInterface(b)
	ka, kb := comparableKind(a), comparableKind(b)
	if !a.IsValid() || !b.IsValid() {
		switch {
		case !a.IsValid() && !b.IsValid():
			return true
		case ka != cmpNone || kb != cmpNone:
			return false // an absent value equals no value of a basic kind
		}
		fastStop()
	}
	switch {
	case ka == cmpNone || kb == cmpNone:
	case ka == kb:
		return equalKind(a, b, ka)
	case ka == cmpInt && kb == cmpUint:
		return a.Int() >= 0 && uint64(a.Int()) == b.Uint() //nolint:gosec // not negative
	case ka == cmpUint && kb == cmpInt:
		return b.Int() >= 0 && a.Uint() == uint64(b.Int()) //nolint:gosec // not negative
	}
	fastStop()
	return false
}

// equalKind compares two values of the same basic kind.
func equalKind(a, b reflect.Value, k comparable) bool {
	switch k {
	case cmpBool:
		return a.Bool() == b.Bool()
	case cmpInt:
		return a.Int() == b.Int()
	case cmpUint:
		return a.Uint() == b.Uint()
	case cmpFloat:
		return a.Float() == b.Float()
	}
	return a.String() == b.String()
}

// less is text/template's lt of two values of basic kinds; anything else stops the
// executor.
func less(a, b reflect.Value) bool {
	a, b = indirectInterface(a), indirectInterface(b)
	ka, kb := comparableKind(a), comparableKind(b)
	switch {
	case ka == cmpNone || kb == cmpNone || ka == cmpBool || kb == cmpBool:
	case ka == kb:
		switch ka {
		case cmpInt:
			return a.Int() < b.Int()
		case cmpUint:
			return a.Uint() < b.Uint()
		case cmpFloat:
			return a.Float() < b.Float()
		}
		return a.String() < b.String()
	case ka == cmpInt && kb == cmpUint:
		return a.Int() < 0 || uint64(a.Int()) < b.Uint() //nolint:gosec // not negative
	case ka == cmpUint && kb == cmpInt:
		return b.Int() >= 0 && a.Uint() < uint64(b.Int()) //nolint:gosec // not negative
	}
	fastStop()
	return false
}
