package render

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"text/template"
	"text/template/parse"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// BuiltinPrefix starts the names of the templates fleetform ships.
const BuiltinPrefix = "builtin/"

// Template is a parsed Template: every manifest compiled once.
type Template struct {
	Name        string
	Type        string
	ContentType string
	// Source locates the Template document; zero for built-in templates.
	Source    controlplane.Source
	manifests []*template.Template
	// checks are the print checks of the manifests (see rewrite.go), per manifest.
	checks [][]*printSite
	// mutates is set when a manifest calls a function that changes dicts in place.
	mutates bool
	// digest identifies the template's text and settings.
	digest [32]byte
	// sizeHint is the largest output seen, to size output buffers.
	sizeHint atomic.Int64
}

// Engine holds the parsed templates of a snapshot and the built-in ones.
type Engine struct {
	// Limits bound every assignment's rendering; set them before rendering. Zero fields
	// take their defaults.
	Limits Limits
	// Diagnostics are template parse errors; a broken template is left out.
	Diagnostics []controlplane.Diagnostic

	templates map[string]*Template
	funcs     template.FuncMap // to parse with
	memo      *configMemo
	regex     *regexCache
	rw        *rewriter

	mu   sync.Mutex
	free []*execContext
	// noFast runs every manifest with text/template (tests compare the two executors);
	// fastStops counts the manifests the fast executor started and gave back to it.
	noFast    bool
	fastStops atomic.Int64
}

// NewEngine parses every template of the snapshot, and the built-in templates, once.
func NewEngine(s *controlplane.Snapshot) *Engine {
	e := &Engine{templates: map[string]*Template{}, memo: &configMemo{}, regex: &regexCache{}}
	e.funcs = allFuncs(&execState{}, e.memo, e.regex)
	e.rw = &rewriter{funcs: e.funcs, marks: map[*byte]*mark{}}
	for _, b := range builtins() {
		if t, err := e.compile(b, controlplane.Source{}); err == nil {
			e.templates[t.Name] = t
		} else {
			panic(fmt.Sprintf("built-in template %s: %v", b.Metadata.Name, err)) // a test guards this
		}
	}
	for _, t := range s.Templates {
		ct, err := e.compile(t.Template, t.Source)
		if err != nil {
			e.Diagnostics = append(e.Diagnostics, templateDiag(t.Source, err))
			continue
		}
		e.templates[ct.Name] = ct
	}
	return e
}

// Lookup returns the template with the given name.
func (e *Engine) Lookup(name string) (*Template, bool) {
	t, ok := e.templates[name]
	return t, ok
}

// Names returns the names of every template, sorted.
func (e *Engine) Names() []string {
	out := make([]string, 0, len(e.templates))
	for n := range e.templates {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (e *Engine) compile(t *v1alpha1.Template, src controlplane.Source) (*Template, error) {
	out := &Template{Name: t.Metadata.Name, Type: t.Spec.Type, ContentType: t.Spec.ContentType, Source: src}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00", t.Metadata.Name, t.Spec.Type, t.Spec.ContentType)
	for i, text := range t.Spec.Manifests {
		fmt.Fprintf(h, "%d\x00%s\x00", len(text), text)
		tt, err := template.New(manifestName(t.Metadata.Name, i)).Funcs(e.funcs).Parse(text)
		if err != nil {
			return nil, err
		}
		for _, sub := range tt.Templates() {
			out.mutates = out.mutates || usesAny(sub.Root, mutating)
		}
		out.manifests = append(out.manifests, tt)
	}
	// The manifests of a template share the data they run on: one that changes it changes
	// it for the next ones.
	for _, tt := range out.manifests {
		out.checks = append(out.checks, e.rw.rewrite(tt, out.mutates))
	}
	copy(out.digest[:], h.Sum(nil))
	return out, nil
}

// execContext runs templates for one assignment at a time: its state, and clones of the
// templates whose functions are bound to the state.
type execContext struct {
	st     *execState
	funcs  template.FuncMap
	clones map[*Template]*boundTemplate
	noFast bool          // every manifest runs with text/template (tests)
	stops  *atomic.Int64 // the engine's fastStops
}

// boundTemplate is a template's manifests bound to an execContext's functions: clones for
// text/template, and the fast executor's programs (nil for a manifest it cannot run).
type boundTemplate struct {
	manifests []*template.Template
	fast      []*fastProgram
}

// acquire returns a context to render an assignment with.
func (e *Engine) acquire() *execContext {
	e.mu.Lock()
	if n := len(e.free); n > 0 {
		c := e.free[n-1]
		e.free = e.free[:n-1]
		e.mu.Unlock()
		return c
	}
	e.mu.Unlock()
	st := &execState{marks: e.rw.marks}
	return &execContext{st: st, funcs: allFuncs(st, e.memo, e.regex), clones: map[*Template]*boundTemplate{},
		noFast: e.noFast, stops: &e.fastStops}
}

func (e *Engine) release(c *execContext) {
	e.mu.Lock()
	e.free = append(e.free, c)
	e.mu.Unlock()
}

// bind returns a template's manifests bound to the context's functions.
func (c *execContext) bind(t *Template) *boundTemplate {
	if b, ok := c.clones[t]; ok {
		return b
	}
	b := &boundTemplate{manifests: make([]*template.Template, len(t.manifests)), fast: make([]*fastProgram, len(t.manifests))}
	for i, m := range t.manifests {
		clone, _ := m.Clone() // never fails
		checks := template.FuncMap{}
		for _, site := range t.checks[i] {
			checks[site.name] = c.st.printCheck(site)
		}
		b.manifests[i] = clone.Funcs(c.funcs).Funcs(checks)
		if !c.noFast && !t.mutates { // a manifest that changes its data cannot run twice
			b.fast[i] = compileFast(m.Tree, fastFuncs{checks: checks, funcs: c.funcs})
		}
	}
	c.clones[t] = b
	return b
}

func manifestName(template string, i int) string { return fmt.Sprintf("%s[%d]", template, i) }

// templateLineRE finds the manifest index and the line inside it in text/template errors
// (`template: name[0]:5:12: ...`).
var templateLineRE = regexp.MustCompile(`\[(\d+)\]:(\d+)(?::\d+)?:`)

// templateDiag locates a template error at its line in the Template's file: the line of
// the manifest's block indicator (`- |`) plus the line inside the manifest.
func templateDiag(src controlplane.Source, err error) controlplane.Diagnostic {
	path := "spec.manifests"
	m := templateLineRE.FindStringSubmatch(err.Error())
	if m != nil {
		path = "spec.manifests[" + m[1] + "]"
	}
	d := src.Diag(path, err.Error(), "")
	if m != nil && d.Line > 0 {
		n, _ := strconv.Atoi(m[2])
		d.Line += n
	}
	return d
}

// usesAny reports whether a template tree calls any of the named functions.
func usesAny(n parse.Node, names map[string]bool) bool {
	if id, ok := n.(*parse.IdentifierNode); ok {
		return names[id.Ident]
	}
	for _, c := range children(n) {
		if usesAny(c, names) {
			return true
		}
	}
	return false
}

// children returns the nodes below n that can hold function calls.
func children(n parse.Node) []parse.Node {
	var out []parse.Node
	add := func(nodes ...parse.Node) {
		for _, c := range nodes {
			if c != nil && !reflect.ValueOf(c).IsNil() {
				out = append(out, c)
			}
		}
	}
	switch x := n.(type) {
	case *parse.ListNode:
		add(x.Nodes...)
	case *parse.ActionNode:
		add(x.Pipe)
	case *parse.PipeNode:
		for _, c := range x.Cmds {
			add(c)
		}
	case *parse.CommandNode:
		add(x.Args...)
	case *parse.IfNode:
		add(x.Pipe, x.List, x.ElseList)
	case *parse.RangeNode:
		add(x.Pipe, x.List, x.ElseList)
	case *parse.WithNode:
		add(x.Pipe, x.List, x.ElseList)
	case *parse.TemplateNode:
		add(x.Pipe)
	}
	return out
}
