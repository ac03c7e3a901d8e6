package render

import (
	"fmt"
	"reflect"
	"strings"
	"text/template"
	"text/template/parse"
)

// Templates run with text/template's default missingkey option, as in Kalypso: an absent
// map key (or a null value) is an invalid value, false in if and with, nil to functions.
// Printing one is what must not happen: text/template would write "<no value>" into the
// manifest. So the engine rewrites every parsed manifest once:
//
//   - a printing action (not a declaration or assignment) whose value may be absent or
//     null, or too large to format, gets one more command, a check function made for that
//     action, which fails with the action's location and text. An action that prints a
//     field chain of the data (.Manifests.repo, $.ConfigData.x) in a template that does
//     not change the data gets a marker instead, which costs no function call: the output
//     writer then looks at what the action writes, and when it is "<no value>" resolves
//     the chain in the data to tell an absent or null value from that very text;
//   - the body of every range loop starts with a marker, and every template starts and ends
//     with one: an empty text node whose writes the execState counts (deadline checks,
//     template call depth). text/template has no other hook into loops that call nothing.

// printSite is a printing action with a check.
type printSite struct {
	// name is the check function's name; it is not in the function set templates are
	// parsed with, so no template can call it.
	name string
	// where is "name[manifest]:line:column"; template the name of the template it is in.
	where, template string
	// expr is the action's pipeline as written.
	expr string
	// chain is the action's field chain from the template data (.ConfigData.x or
	// $.ConfigData.x in a manifest's main template), to say which key is absent.
	chain []string
}

// rewriter rewrites the manifests of an engine's templates.
type rewriter struct {
	funcs   template.FuncMap // the function set, for result types
	marks   map[*byte]*mark
	sites   int
	mutates bool
	// scalars are the variables of the template being rewritten that only ever hold a
	// string, a bool or a number.
	scalars map[string]bool
}

// scope is what the rewriter knows about dot and $ where an action runs.
type scope struct {
	dotData, dollarData bool
}

// rewrite rewrites a parsed manifest and returns its print checks; mutates says whether
// the template changes the data (see mutating).
func (r *rewriter) rewrite(tt *template.Template, mutates bool) []*printSite {
	r.mutates = mutates
	var sites []*printSite
	for _, t := range tt.Templates() {
		tree := t.Tree
		if tree == nil || tree.Root == nil {
			continue
		}
		var sc scope
		if t.Name() == tt.Name() && !redefinesData(tt) {
			sc = scope{dotData: true, dollarData: true}
		}
		r.inferScalars(tree.Root, sc)
		sites = r.list(tree, tree.Root, sc, t.Name(), sites)
		where, _ := tree.ErrorContext(tree.Root)
		nodes := make([]parse.Node, 0, len(tree.Root.Nodes)+2)
		nodes = append(nodes, r.marker(&mark{kind: markEnter, where: where}, tree.Root.Pos))
		nodes = append(nodes, tree.Root.Nodes...)
		tree.Root.Nodes = append(nodes, r.marker(&mark{kind: markExit, where: where}, tree.Root.Pos))
	}
	return sites
}

// redefinesData reports whether $ or the main template of a manifest may not be the
// template data: $ is declared or assigned, or the main template is called by name.
func redefinesData(tt *template.Template) bool {
	found := false
	for _, t := range tt.Templates() {
		if t.Tree == nil {
			continue
		}
		visit(t.Root, func(n parse.Node) {
			switch n := n.(type) {
			case *parse.PipeNode:
				for _, v := range n.Decl {
					found = found || v.Ident[0] == "$"
				}
			case *parse.TemplateNode:
				found = found || n.Name == tt.Name()
			}
		})
	}
	return found
}

// visit calls fn for n and every node below it that holds pipelines or lists.
func visit(n parse.Node, fn func(parse.Node)) {
	if n == nil || reflect.ValueOf(n).IsNil() {
		return
	}
	fn(n)
	switch x := n.(type) {
	case *parse.ListNode:
		for _, c := range x.Nodes {
			visit(c, fn)
		}
	case *parse.ActionNode:
		visit(x.Pipe, fn)
	case *parse.IfNode:
		visit(x.Pipe, fn)
		visit(x.List, fn)
		visit(x.ElseList, fn)
	case *parse.RangeNode:
		visit(x.Pipe, fn)
		visit(x.List, fn)
		visit(x.ElseList, fn)
	case *parse.WithNode:
		visit(x.Pipe, fn)
		visit(x.List, fn)
		visit(x.ElseList, fn)
	case *parse.TemplateNode:
		visit(x.Pipe, fn)
	}
}

func (r *rewriter) list(tree *parse.Tree, l *parse.ListNode, sc scope, tmpl string, sites []*printSite) []*printSite {
	if l == nil {
		return sites
	}
	inner := scope{dollarData: sc.dollarData} // dot is the with or range value
	nodes := make([]parse.Node, 0, len(l.Nodes))
	for _, n := range l.Nodes {
		switch n := n.(type) {
		case *parse.ActionNode:
			if len(n.Pipe.Decl) > 0 || r.safe(n.Pipe, sc) {
				break
			}
			site := r.site(tree, n, sc, tmpl)
			if site.chain != nil && !r.mutates {
				nodes = append(nodes, r.marker(&mark{kind: markPrint, where: site.where, site: site}, n.Pos))
				break
			}
			id := parse.NewIdentifier(site.name).SetTree(tree).SetPos(n.Pos)
			n.Pipe.Cmds = append(n.Pipe.Cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: n.Pos, Args: []parse.Node{id}})
			sites = append(sites, site)
		case *parse.IfNode:
			sites = r.list(tree, n.List, sc, tmpl, sites)
			sites = r.list(tree, n.ElseList, sc, tmpl, sites)
		case *parse.WithNode:
			sites = r.list(tree, n.List, inner, tmpl, sites)
			sites = r.list(tree, n.ElseList, sc, tmpl, sites)
		case *parse.RangeNode:
			sites = r.list(tree, n.List, inner, tmpl, sites)
			sites = r.list(tree, n.ElseList, sc, tmpl, sites)
			where, _ := tree.ErrorContext(n)
			n.List.Nodes = append([]parse.Node{r.marker(&mark{kind: markIter, where: where}, n.Pos)}, n.List.Nodes...)
		}
		nodes = append(nodes, n)
	}
	l.Nodes = nodes
	return sites
}

// site describes a printing action that needs a check.
func (r *rewriter) site(tree *parse.Tree, a *parse.ActionNode, sc scope, tmpl string) *printSite {
	r.sites++
	site := &printSite{name: fmt.Sprintf("fleetformPrintCheck%d", r.sites), template: tmpl, expr: a.Pipe.String()}
	// Located as text/template locates an error: at the word of the last command (for a
	// field chain, at its last field).
	last := a.Pipe.Cmds[len(a.Pipe.Cmds)-1]
	site.where, _ = tree.ErrorContext(last.Args[0])
	if len(a.Pipe.Cmds) == 1 && len(a.Pipe.Cmds[0].Args) == 1 {
		switch n := a.Pipe.Cmds[0].Args[0].(type) {
		case *parse.FieldNode:
			if sc.dotData {
				site.chain = n.Ident
			}
		case *parse.VariableNode:
			if sc.dollarData && n.Ident[0] == "$" && len(n.Ident) > 1 {
				site.chain = n.Ident[1:]
			}
		}
	}
	return site
}

// marker makes the node of a marker: an empty text whose one byte of capacity is the
// marker's own, by which the output writer finds it.
func (r *rewriter) marker(m *mark, pos parse.Pos) *parse.TextNode {
	b := make([]byte, 0, 1)
	r.marks[&b[:1][0]] = m
	return &parse.TextNode{NodeType: parse.NodeText, Pos: pos, Text: b}
}

// safe reports whether a pipeline's value is always a string, a bool or a number: never
// absent, and bounded by the other limits when printed. Its action needs no check.
func (r *rewriter) safe(p *parse.PipeNode, sc scope) bool {
	if len(p.Cmds) == 0 {
		return false
	}
	c := p.Cmds[len(p.Cmds)-1]
	switch n := c.Args[0].(type) {
	case *parse.IdentifierNode:
		return r.scalarFunc(n.Ident)
	case *parse.StringNode, *parse.NumberNode, *parse.BoolNode:
		return len(c.Args) == 1
	case *parse.FieldNode:
		return sc.dotData && len(c.Args) == 1 && scalarField(n.Ident)
	case *parse.VariableNode:
		if len(c.Args) != 1 {
			return false
		}
		if n.Ident[0] == "$" {
			return sc.dollarData && scalarField(n.Ident[1:])
		}
		return len(n.Ident) == 1 && r.scalars[n.Ident[0]]
	case *parse.PipeNode:
		return len(c.Args) == 1 && r.safe(n, sc)
	}
	return false
}

// inferScalars finds the variables of a template that only ever hold a string, a bool or a
// number: every declaration and assignment of the name is an action whose pipeline is
// (safe), and none is made by if, with or range.
func (r *rewriter) inferScalars(root *parse.ListNode, sc scope) {
	type decl struct {
		pipe *parse.PipeNode
		sc   scope
	}
	decls := map[string][]decl{}
	other := map[string]bool{}
	var walk func(l *parse.ListNode, sc scope)
	control := func(pipe *parse.PipeNode, list, elseList *parse.ListNode, sc, inList scope) {
		for _, v := range pipe.Decl {
			other[v.Ident[0]] = true
		}
		walk(list, inList)
		walk(elseList, sc)
	}
	walk = func(l *parse.ListNode, sc scope) {
		if l == nil {
			return
		}
		inner := scope{dollarData: sc.dollarData}
		for _, n := range l.Nodes {
			switch n := n.(type) {
			case *parse.ActionNode:
				for _, v := range n.Pipe.Decl {
					decls[v.Ident[0]] = append(decls[v.Ident[0]], decl{n.Pipe, sc})
				}
			case *parse.IfNode:
				control(n.Pipe, n.List, n.ElseList, sc, sc)
			case *parse.WithNode:
				control(n.Pipe, n.List, n.ElseList, sc, inner)
			case *parse.RangeNode:
				control(n.Pipe, n.List, n.ElseList, sc, inner)
			}
		}
	}
	walk(root, sc)
	r.scalars = map[string]bool{}
	for name := range decls {
		r.scalars[name] = !other[name]
	}
	for changed := true; changed; { // until no variable is found to hold something else
		changed = false
		for name, ds := range decls {
			for _, d := range ds {
				if r.scalars[name] && (len(d.pipe.Decl) != 1 || !r.safe(d.pipe, d.sc)) {
					r.scalars[name], changed = false, true
				}
			}
		}
	}
}

// scalarFunc reports whether a function always returns a string, a bool or a number.
func (r *rewriter) scalarFunc(name string) bool {
	switch name { // text/template's own
	case "not", "eq", "ne", "lt", "le", "gt", "ge", "len", "print", "printf", "println", "html", "js", "urlquery":
		return true
	}
	f, ok := r.funcs[name]
	if !ok {
		return false
	}
	t := reflect.TypeOf(f)
	return t.NumOut() > 0 && scalarKind(t.Out(0).Kind())
}

var dataType = reflect.TypeFor[Data]()

// scalarField reports whether a field chain of the template data is a string, bool or
// number field (no map on the way, so never absent).
func scalarField(idents []string) bool {
	t := dataType
	for _, id := range idents {
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := t.FieldByName(id)
		if !ok || !f.IsExported() {
			return false
		}
		t = f.Type
	}
	return len(idents) > 0 && scalarKind(t.Kind())
}

func scalarKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
		reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Uintptr, reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}

// noValueError is an action that would print an absent or null value.
type noValueError struct {
	site   *printSite
	reason string
}

func (e *noValueError) Error() string {
	reason := e.reason
	if reason == "" {
		reason = "no value (absent or null)"
	}
	return fmt.Sprintf("template: %s: executing %q at <%s>: %s; an absent or null value cannot be printed: guard it with if or with, or give it a default",
		e.site.where, e.site.template, e.site.expr, reason)
}

// printCheck is the check function of a print site, bound to st.
func (st *execState) printCheck(site *printSite) func(reflect.Value) reflect.Value {
	return func(v reflect.Value) reflect.Value {
		if !v.IsValid() {
			panic(&noValueError{site: site})
		}
		if scalarKind(v.Kind()) || !v.CanInterface() {
			return v
		}
		if z, ok := sizeOf(v.Interface(), st.left); !ok {
			err := manifestError(st.lim)
			if z.tooDeep {
				err = depthError()
			}
			err.Where = site.where
			panic(err)
		}
		return v
	}
}

// diagnose says why a field chain of the data has no value: which key is absent, or which
// value is null.
func diagnose(data *Data, chain []string) string {
	v := reflect.ValueOf(data).Elem()
	for i, id := range chain {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return fmt.Sprintf("the value of .%s is null", strings.Join(chain[:i], "."))
			}
			v = v.Elem()
		}
		switch v.Kind() {
		case reflect.Struct:
			v = v.FieldByName(id)
		case reflect.Map:
			if v.Type().Key().Kind() != reflect.String {
				return ""
			}
			v = v.MapIndex(reflect.ValueOf(id).Convert(v.Type().Key()))
			if !v.IsValid() {
				return fmt.Sprintf("map has no entry for key %q", id)
			}
		default:
			return ""
		}
		if !v.IsValid() {
			return ""
		}
	}
	if (v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer) && v.IsNil() {
		return fmt.Sprintf("the value of .%s is null", strings.Join(chain, "."))
	}
	return ""
}
