package render

import (
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"text/template/parse"
)

// The fast executor runs a manifest's parse tree (as text/template parsed it and the
// rewriter changed it) with text/template's rules, but without what makes text/template
// slow for the engine's templates: it calls the common template functions directly instead
// of through reflect.Value.Call, and prints strings without fmt. For the built-in templates
// that is most of their cost (about 50 function calls and 20 printed values per assignment).
//
// It runs only what it knows, and only while nothing goes wrong:
//
//   - a manifest it cannot run (a template call, break or continue, a chained field, nil, a
//     function called as an argument without parentheses, a wrong number of arguments, a
//     constant of the wrong type) is compiled to nil and always runs with text/template;
//   - when anything goes wrong while it runs (a function's error or panic, a limit, an absent
//     value printed, a value it does not handle), it stops: the engine discards what it
//     wrote, restores the limits' accounting and runs the manifest with text/template, which
//     fails, or succeeds, exactly as it always did.
//
// So it only has to match text/template when the manifest succeeds, and tests compare the
// two on every built-in template and on generated ones. A template that changes the data
// it runs on (set, unset, ...) always runs with text/template: running it twice would
// change the data twice.

// errFastStop stops the fast executor: the manifest runs again with text/template.
var errFastStop = errors.New("fast executor stopped")

func fastStop() { panic(errFastStop) }

// fastProgram is a manifest compiled for the fast executor, bound to an execContext's
// functions.
type fastProgram struct {
	root fastNode
	x    fastExec
}

// fastExec is the state of one run: the variables in scope, and a stack for arguments.
type fastExec struct {
	st   *execState
	vars []fastVar
}

type fastVar struct {
	name  string
	value reflect.Value
}

// fastNode runs a node; fastCommand evaluates a command given the value piped into it
// (none for the first command of a pipeline); fastArg evaluates an operand.
type (
	fastNode    func(x *fastExec, dot reflect.Value)
	fastCommand func(x *fastExec, dot, final reflect.Value) reflect.Value
	fastArg     func(x *fastExec, dot reflect.Value) reflect.Value
)

var (
	reflectValueType = reflect.TypeFor[reflect.Value]()
	stringType       = reflect.TypeFor[string]()
	errorType        = reflect.TypeFor[error]()
	stringerType     = reflect.TypeFor[fmt.Stringer]()
	trueValue        = reflect.ValueOf(true)
	falseValue       = reflect.ValueOf(false)
)

// run runs the program on data, writing through st; it reports false when it stopped
// (what it wrote must then be discarded).
func (p *fastProgram) run(st *execState, data *Data) (ok bool) {
	x := &p.x
	x.st = st
	dv := reflect.ValueOf(data)
	x.vars = append(x.vars[:0], fastVar{"$", dv})
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
		clear(x.vars)
		x.st = nil
	}()
	p.root(x, dv)
	return true
}

// fastCompiler compiles the manifests of one execContext.
type fastCompiler struct {
	funcs fastFuncs
}

// fastFuncs is the functions a manifest runs with: its print checks and the context's
// functions.
type fastFuncs struct {
	checks, funcs map[string]any
}

func (f fastFuncs) lookup(name string) (any, bool) {
	if fn, ok := f.checks[name]; ok {
		return fn, true
	}
	fn, ok := f.funcs[name]
	return fn, ok
}

// fastUnsupported ends the compilation of a manifest the fast executor cannot run.
type fastUnsupported struct{ what string }

// compileFast compiles a manifest, or returns nil when the fast executor cannot run it.
func compileFast(tree *parse.Tree, funcs fastFuncs) (p *fastProgram) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(fastUnsupported); !ok {
				panic(r)
			}
			p = nil
		}
	}()
	c := &fastCompiler{funcs: funcs}
	return &fastProgram{root: c.list(tree.Root)}
}

func unsupported(format string, args ...any) {
	panic(fastUnsupported{what: fmt.Sprintf(format, args...)})
}

func (c *fastCompiler) list(l *parse.ListNode) fastNode {
	if l == nil {
		return func(*fastExec, reflect.Value) {}
	}
	nodes := make([]fastNode, 0, len(l.Nodes))
	for _, n := range l.Nodes {
		if n.Type() == parse.NodeComment {
			continue
		}
		nodes = append(nodes, c.node(n))
	}
	return func(x *fastExec, dot reflect.Value) {
		for _, n := range nodes {
			n(x, dot)
		}
	}
}

func (c *fastCompiler) node(n parse.Node) fastNode {
	switch n := n.(type) {
	case *parse.TextNode:
		text := n.Text
		return func(x *fastExec, _ reflect.Value) {
			if _, err := x.st.Write(text); err != nil {
				fastStop()
			}
		}
	case *parse.ActionNode:
		pipe := c.pipeline(n.Pipe)
		if len(n.Pipe.Decl) > 0 {
			return func(x *fastExec, dot reflect.Value) { pipe(x, dot) }
		}
		return func(x *fastExec, dot reflect.Value) { x.print(pipe(x, dot)) }
	case *parse.IfNode:
		return c.ifOrWith(n.Pipe, n.List, n.ElseList, false)
	case *parse.WithNode:
		return c.ifOrWith(n.Pipe, n.List, n.ElseList, true)
	case *parse.RangeNode:
		return c.rangeNode(n)
	case *parse.ListNode:
		return c.list(n)
	}
	unsupported("node %s", n)
	return nil
}

func (c *fastCompiler) ifOrWith(p *parse.PipeNode, list, elseList *parse.ListNode, with bool) fastNode {
	pipe, body := c.pipeline(p), c.list(list)
	var otherwise fastNode
	if elseList != nil {
		otherwise = c.list(elseList)
	}
	return func(x *fastExec, dot reflect.Value) {
		mark := len(x.vars)
		val := pipe(x, dot)
		truth, ok := isTrue(indirectInterface(val))
		if !ok {
			fastStop()
		}
		switch {
		case truth && with:
			body(x, val)
		case truth:
			body(x, dot)
		case otherwise != nil:
			otherwise(x, dot)
		}
		x.pop(mark)
	}
}

// rangeNode ranges over a slice, an array, a map with string keys (in key order) or an
// integer; any other value stops the executor.
func (c *fastCompiler) rangeNode(r *parse.RangeNode) fastNode {
	pipe, body := c.pipeline(r.Pipe), c.list(r.List)
	var otherwise fastNode
	if r.ElseList != nil {
		otherwise = c.list(r.ElseList)
	}
	decl, assign := r.Pipe.Decl, r.Pipe.IsAssign
	return func(x *fastExec, dot reflect.Value) {
		mark := len(x.vars)
		val, _ := indirect(pipe(x, dot))
		inner := len(x.vars)
		one := func(index, elem reflect.Value) {
			if len(decl) > 0 {
				switch {
				case assign && len(decl) > 1:
					x.setVar(decl[0].Ident[0], index)
				case assign:
					x.setVar(decl[0].Ident[0], elem)
				default:
					x.vars[len(x.vars)-1].value = elem
				}
			}
			if len(decl) > 1 {
				if assign {
					x.setVar(decl[1].Ident[0], elem)
				} else {
					x.vars[len(x.vars)-2].value = index
				}
			}
			body(x, elem)
			x.pop(inner)
		}
		ran := iterate(val, len(decl), one)
		if !ran && otherwise != nil {
			otherwise(x, dot)
		}
		x.pop(mark)
	}
}

// iterate calls one for each element of val (with its index or key, for those that have
// one), as text/template's range does, and reports whether there was any; it stops the
// executor on a value it does not range over. vars is the number of range variables.
func iterate(val reflect.Value, vars int, one func(index, elem reflect.Value)) bool {
	ran := false
	switch val.Kind() {
	case reflect.Array, reflect.Slice:
		for i := range val.Len() {
			ran = true
			one(reflect.ValueOf(i), val.Index(i))
		}
	case reflect.Map:
		if val.Len() > 0 && val.Type().Key().Kind() != reflect.String {
			fastStop() // text/template's key order for other keys is not worth repeating here
		}
		keys := val.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return cmp.Compare(a.String(), b.String()) })
		for _, k := range keys {
			ran = true
			one(k, val.MapIndex(k))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if vars > 1 {
			fastStop() // an error in text/template
		}
		for i := range val.Int() {
			ran = true
			one(reflect.Value{}, reflect.ValueOf(i).Convert(val.Type()))
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if vars > 1 {
			fastStop()
		}
		for i := range val.Uint() {
			ran = true
			one(reflect.Value{}, reflect.ValueOf(i).Convert(val.Type()))
		}
	case reflect.Invalid:
	default:
		fastStop()
	}
	return ran
}

// pipeline evaluates a pipeline: each command gets the value of the one before as its last
// argument; an interface value is dug into after each; the variables are declared or set.
func (c *fastCompiler) pipeline(p *parse.PipeNode) func(x *fastExec, dot reflect.Value) reflect.Value {
	if p == nil {
		return func(*fastExec, reflect.Value) reflect.Value { return reflect.Value{} }
	}
	cmds := make([]fastCommand, len(p.Cmds))
	for i, cmd := range p.Cmds {
		cmds[i] = c.command(cmd, i > 0)
	}
	decl, assign := p.Decl, p.IsAssign
	return func(x *fastExec, dot reflect.Value) reflect.Value {
		var value reflect.Value
		for _, cmd := range cmds {
			value = cmd(x, dot, value)
			if value.Kind() == reflect.Interface && value.Type().NumMethod() == 0 {
				value = value.Elem()
			}
		}
		for _, v := range decl {
			if assign {
				x.setVar(v.Ident[0], value)
			} else {
				x.vars = append(x.vars, fastVar{v.Ident[0], value})
			}
		}
		return value
	}
}

// command compiles a command; piped says whether a value is piped into it.
func (c *fastCompiler) command(cmd *parse.CommandNode, piped bool) fastCommand {
	first := cmd.Args[0]
	if id, ok := first.(*parse.IdentifierNode); ok {
		return c.call(id.Ident, cmd.Args[1:], piped)
	}
	if len(cmd.Args) > 1 || piped {
		unsupported("arguments to %s, which is not a function", first) // an error in text/template
	}
	arg := c.arg(first)
	return func(x *fastExec, dot, _ reflect.Value) reflect.Value { return arg(x, dot) }
}

// arg compiles an operand to its value, as text/template evaluates an argument into an
// empty interface.
func (c *fastCompiler) arg(n parse.Node) fastArg {
	switch n := n.(type) {
	case *parse.DotNode:
		return func(_ *fastExec, dot reflect.Value) reflect.Value { return dot }
	case *parse.FieldNode:
		chain := fieldChain(n.Ident)
		return func(x *fastExec, dot reflect.Value) reflect.Value { return x.fields(dot, chain) }
	case *parse.VariableNode:
		name, chain := n.Ident[0], fieldChain(n.Ident[1:])
		return func(x *fastExec, _ reflect.Value) reflect.Value { return x.fields(x.varValue(name), chain) }
	case *parse.PipeNode:
		pipe := c.pipeline(n)
		return func(x *fastExec, dot reflect.Value) reflect.Value { return pipe(x, dot) }
	case *parse.StringNode:
		v := reflect.ValueOf(n.Text)
		return func(*fastExec, reflect.Value) reflect.Value { return v }
	case *parse.BoolNode:
		v := reflect.ValueOf(n.True)
		return func(*fastExec, reflect.Value) reflect.Value { return v }
	case *parse.NumberNode:
		v := idealConstant(n)
		return func(*fastExec, reflect.Value) reflect.Value { return v }
	}
	unsupported("operand %s", n)
	return nil
}

// idealConstant is a number's value where no type is asked for: complex, float or int by
// its syntax, as text/template takes it.
func idealConstant(n *parse.NumberNode) reflect.Value {
	switch {
	case n.IsComplex:
		return reflect.ValueOf(n.Complex128)
	case n.IsFloat && !isHexInt(n.Text) && !isRuneInt(n.Text) && strings.ContainsAny(n.Text, ".eEpP"):
		return reflect.ValueOf(n.Float64)
	case n.IsInt && int64(int(n.Int64)) == n.Int64:
		return reflect.ValueOf(int(n.Int64))
	}
	unsupported("number %s", n.Text) // an error in text/template
	return reflect.Value{}
}

func isRuneInt(s string) bool { return len(s) > 0 && s[0] == '\'' }

func isHexInt(s string) bool {
	return len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && !strings.ContainsAny(s, "pP")
}

// typedArg compiles an operand to a value of the parameter type typ, as text/template
// evaluates an argument: a constant of that type (or fails to compile), else the operand's
// value checked against typ when it runs.
func (c *fastCompiler) typedArg(n parse.Node, typ reflect.Type) fastArg {
	switch n := n.(type) {
	case *parse.DotNode, *parse.FieldNode, *parse.VariableNode, *parse.PipeNode:
		arg := c.arg(n)
		return func(x *fastExec, dot reflect.Value) reflect.Value { return validateType(arg(x, dot), typ) }
	case *parse.StringNode, *parse.BoolNode, *parse.NumberNode:
		v := constantOf(n, typ)
		return func(*fastExec, reflect.Value) reflect.Value { return v }
	}
	unsupported("argument %s", n)
	return nil
}

// constantOf is a constant as an argument of type typ.
func constantOf(n parse.Node, typ reflect.Type) reflect.Value {
	if typ.Kind() == reflect.Interface && typ.NumMethod() == 0 {
		switch n := n.(type) {
		case *parse.StringNode:
			return reflect.ValueOf(n.Text)
		case *parse.BoolNode:
			return reflect.ValueOf(n.True)
		case *parse.NumberNode:
			return idealConstant(n)
		}
	}
	out := reflect.New(typ).Elem()
	switch n := n.(type) {
	case *parse.StringNode:
		if typ.Kind() == reflect.String {
			out.SetString(n.Text)
			return out
		}
	case *parse.BoolNode:
		if typ.Kind() == reflect.Bool {
			out.SetBool(n.True)
			return out
		}
	case *parse.NumberNode:
		switch typ.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if n.IsInt {
				out.SetInt(n.Int64)
				return out
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if n.IsUint {
				out.SetUint(n.Uint64)
				return out
			}
		case reflect.Float32, reflect.Float64:
			if n.IsFloat {
				out.SetFloat(n.Float64)
				return out
			}
		}
	}
	unsupported("constant %s for an argument of type %s", n, typ) // an error in text/template
	return reflect.Value{}
}

// canBeNil reports whether an untyped nil can be a value of typ.
func canBeNil(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Chan, reflect.Func, reflect.Interface, reflect.Map, reflect.Pointer, reflect.Slice:
		return true
	case reflect.Struct:
		return typ == reflectValueType
	}
	return false
}

// validateType is value as an argument of type typ (text/template's rules), or stops.
func validateType(value reflect.Value, typ reflect.Type) reflect.Value {
	if !value.IsValid() {
		if canBeNil(typ) {
			return reflect.Zero(typ)
		}
		fastStop()
	}
	if typ == reflectValueType && value.Type() != typ {
		return reflect.ValueOf(value)
	}
	if value.Type().AssignableTo(typ) {
		return value
	}
	if value.Kind() == reflect.Interface && !value.IsNil() {
		value = value.Elem()
		if value.Type().AssignableTo(typ) {
			return value
		}
	}
	switch {
	case value.Kind() == reflect.Pointer && value.Type().Elem().AssignableTo(typ):
		value = value.Elem()
		if !value.IsValid() {
			fastStop()
		}
		return value
	case reflect.PointerTo(value.Type()).AssignableTo(typ) && value.CanAddr():
		return value.Addr()
	}
	fastStop()
	return reflect.Value{}
}

// fieldStep is one name of a field chain: its value as a map key, and the field of the
// template data it names (ok false: none, or not exported).
type fieldStep struct {
	key   reflect.Value
	field []int
	ok    bool
}

func fieldChain(idents []string) []fieldStep {
	out := make([]fieldStep, len(idents))
	for i, id := range idents {
		f, ok := dataType.FieldByName(id)
		out[i] = fieldStep{key: reflect.ValueOf(id), field: f.Index, ok: ok && f.IsExported()}
	}
	return out
}

// fields evaluates a field chain from receiver: fields of the template data and entries of
// maps with string keys. An absent key gives the invalid value, and so does every field
// after it (text/template's default missingkey).
func (x *fastExec) fields(receiver reflect.Value, chain []fieldStep) reflect.Value {
	for _, step := range chain {
		receiver = x.field(receiver, step)
	}
	return receiver
}

func (x *fastExec) field(receiver reflect.Value, step fieldStep) reflect.Value {
	if !receiver.IsValid() {
		return reflect.Value{}
	}
	receiver, isNil := indirect(receiver)
	if isNil {
		fastStop() // nil pointer evaluating ...
	}
	switch receiver.Kind() {
	case reflect.Struct:
		if receiver.Type() != dataType { // the data has no methods (TestFastDataHasNoMethods)
			fastStop()
		}
		if !step.ok {
			fastStop()
		}
		return receiver.FieldByIndex(step.field)
	case reflect.Map:
		t := receiver.Type()
		if t.Key() != stringType || hasMethods(receiver) {
			fastStop()
		}
		return receiver.MapIndex(step.key)
	}
	fastStop()
	return reflect.Value{}
}

// hasMethods reports whether text/template would look for a method of v's by a field name.
func hasMethods(v reflect.Value) bool {
	t := v.Type()
	if v.CanAddr() {
		t = reflect.PointerTo(t)
	}
	return t.NumMethod() > 0
}

func (x *fastExec) varValue(name string) reflect.Value {
	for i := len(x.vars) - 1; i >= 0; i-- {
		if x.vars[i].name == name {
			return x.vars[i].value
		}
	}
	fastStop()
	return reflect.Value{}
}

func (x *fastExec) setVar(name string, value reflect.Value) {
	for i := len(x.vars) - 1; i >= 0; i-- {
		if x.vars[i].name == name {
			x.vars[i].value = value
			return
		}
	}
	fastStop()
}

func (x *fastExec) pop(mark int) {
	clear(x.vars[mark:])
	x.vars = x.vars[:mark]
}

// print writes a value as text/template prints it: strings as they are, the rest through
// fmt.
func (x *fastExec) print(v reflect.Value) {
	if v.Kind() == reflect.String && v.Type() == stringType {
		if err := x.st.writeString(v.String()); err != nil {
			fastStop()
		}
		return
	}
	iface, ok := printableValue(v)
	if !ok {
		fastStop()
	}
	if _, err := fmt.Fprint(x.st, iface); err != nil {
		fastStop()
	}
}

// printableValue is the value fmt prints for v, as text/template chooses it.
func printableValue(v reflect.Value) (any, bool) {
	if v.Kind() == reflect.Pointer {
		v, _ = indirect(v)
	}
	if !v.IsValid() {
		return "<no value>", true
	}
	if !v.Type().Implements(errorType) && !v.Type().Implements(stringerType) {
		if v.CanAddr() && (reflect.PointerTo(v.Type()).Implements(errorType) || reflect.PointerTo(v.Type()).Implements(stringerType)) {
			v = v.Addr()
		} else if k := v.Kind(); k == reflect.Chan || k == reflect.Func {
			return nil, false
		}
	}
	return v.Interface(), true
}

// isTrue is text/template's truth of a value, and whether it has one (template.IsTrue takes
// an interface: a reflect.Value of a field would be copied out for every if and with).
func isTrue(val reflect.Value) (truth, ok bool) {
	if !val.IsValid() {
		return false, true
	}
	switch val.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		truth = val.Len() > 0
	case reflect.Bool:
		truth = val.Bool()
	case reflect.Complex64, reflect.Complex128:
		truth = val.Complex() != 0
	case reflect.Chan, reflect.Func, reflect.Pointer, reflect.UnsafePointer, reflect.Interface:
		truth = !val.IsNil()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		truth = val.Int() != 0
	case reflect.Float32, reflect.Float64:
		truth = val.Float() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		truth = val.Uint() != 0
	case reflect.Struct:
		truth = true
	default:
		return false, false
	}
	return truth, true
}

// indirect follows pointers and interfaces to the value at the end; isNil reports a nil
// one on the way.
func indirect(v reflect.Value) (rv reflect.Value, isNil bool) {
	for ; v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface; v = v.Elem() {
		if v.IsNil() {
			return v, true
		}
	}
	return v, false
}

// indirectInterface is the value in an interface (the invalid value for a nil one).
func indirectInterface(v reflect.Value) reflect.Value {
	if v.Kind() != reflect.Interface {
		return v
	}
	if v.IsNil() {
		return reflect.Value{}
	}
	return v.Elem()
}

func truth(v reflect.Value) bool {
	t, _ := isTrue(indirectInterface(v))
	return t
}
