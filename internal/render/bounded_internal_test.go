package render

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Masterminds/sprig/v3"
)

// textBuiltins are text/template's own functions.
var textBuiltins = []string{"and", "or", "not", "call", "index", "slice", "len", "eq", "ne", "lt", "le", "gt", "ge",
	"print", "printf", "println", "html", "js", "urlquery"}

func testState() *execState {
	st := &execState{}
	st.start(Limits{}.withDefaults())
	return st
}

// TestEveryFunctionIsClassified keeps funcClasses complete: every function of sprig and of
// text/template is denied, pure or bounded, and every bounded one is replaced by a wrapper.
func TestEveryFunctionIsClassified(t *testing.T) {
	fm := allFuncs(testState(), nil, &regexCache{})
	sp := sprig.TxtFuncMap()
	names := slices.Concat(textBuiltins, slices.Collect(func(yield func(string) bool) {
		for name := range sp {
			if !yield(name) {
				return
			}
		}
	}))
	for _, name := range names {
		if slices.Contains(denied, name) {
			if _, ok := fm[name]; ok {
				t.Errorf("%s is denied but available", name)
			}
			continue
		}
		class, ok := funcClasses[name]
		if !ok {
			t.Errorf("%s is not classified in funcClasses (denied, pure or bounded)", name)
			continue
		}
		if class != classBounded {
			continue
		}
		f, ok := fm[name]
		if !ok {
			t.Errorf("bounded function %s is missing", name)
			continue
		}
		if orig, ok := sp[name]; ok && reflect.ValueOf(f).Pointer() == reflect.ValueOf(orig).Pointer() {
			t.Errorf("bounded function %s is sprig's own, not a wrapper", name)
		}
	}
	for name := range funcClasses {
		if _, ok := sp[name]; !ok && !slices.Contains(textBuiltins, name) {
			t.Errorf("funcClasses lists %s, which neither sprig nor text/template has", name)
		}
	}
}

// TestSeqIsSprigUntilStep compares seq with sprig's untilStep where sprig's terminates.
func TestSeqIsSprigUntilStep(t *testing.T) {
	st := testState()
	untilStep := sprig.TxtFuncMap()["untilStep"].(func(int, int, int) []int)
	for start := -7; start <= 7; start++ {
		for stop := -7; stop <= 7; stop++ {
			for step := -4; step <= 4; step++ {
				want, got := untilStep(start, stop, step), st.seq(start, stop, step)
				if !slices.Equal(got, want) || got == nil {
					t.Errorf("seq(%d, %d, %d) = %v, want %v", start, stop, step, got, want)
				}
			}
		}
	}
}

// TestUniqIsSprigUniq compares uniq with sprig's on lists of scalars, lists and dicts.
func TestUniqIsSprigUniq(t *testing.T) {
	st := testState()
	sprigUniq := sprig.TxtFuncMap()["uniq"].(func(any) []any)
	mustUniq := sprig.TxtFuncMap()["mustUniq"].(func(any) ([]any, error))
	rng := rand.New(rand.NewPCG(1, 2))
	values := []any{nil, 1, int64(1), 1.0, "1", true, []any{1}, []any{1}, map[string]any{"a": 1}, map[string]any{"a": 1}, []string{"x"}}
	for range 200 {
		var l []any
		for range rng.IntN(12) {
			l = append(l, values[rng.IntN(len(values))])
		}
		got, err := st.uniq(l, mustUniq)
		if err != nil {
			t.Fatal(err)
		}
		if want := sprigUniq(l); !reflect.DeepEqual(got, want) {
			t.Errorf("uniq(%v) = %v, want %v", l, got, want)
		}
	}
}

// TestWrapCustomLen compares wrapCustomLen with the length of sprig's wrapWith (goutils'
// WrapCustom).
func TestWrapCustomLen(t *testing.T) {
	wrapWith := sprig.TxtFuncMap()["wrapWith"].(func(int, string, string) string)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = " ab"[rng.IntN(3)]
		}
		s, n := string(b), rng.IntN(8)-1
		for _, sep := range []string{"\n", "<br>"} {
			if got, want := wrapCustomLen(s, n, sep), len(wrapWith(n, sep, s)); got != want {
				t.Errorf("wrapCustomLen(%q, %d, %q) = %d, want %d", s, n, sep, got, want)
			}
		}
	}
}

// TestIndentLinesIsSprigs compares indentLines with sprig's indent and nindent.
func TestIndentLinesIsSprigs(t *testing.T) {
	sp := sprig.TxtFuncMap()
	indent, nindent := sp["indent"].(func(int, string) string), sp["nindent"].(func(int, string) string)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		b := make([]byte, rng.IntN(30))
		for i := range b {
			b[i] = "a \n\r"[rng.IntN(4)]
		}
		s, n := string(b), rng.IntN(140)
		lines := strings.Count(s, "\n") + 1
		if got, want := indentLines(n, lines, s, false), indent(n, s); got != want {
			t.Fatalf("indentLines(%d, %q, false) = %q, want sprig's indent %q", n, s, got, want)
		}
		if got, want := indentLines(n, lines, s, true), nindent(n, s); got != want {
			t.Fatalf("indentLines(%d, %q, true) = %q, want sprig's nindent %q", n, s, got, want)
		}
	}
}

// TestBoundedResultsAreSprigs checks that wrapped functions return sprig's results when
// they fit.
func TestBoundedResultsAreSprigs(t *testing.T) {
	fm := allFuncs(testState(), nil, &regexCache{})
	sp := sprig.TxtFuncMap()
	calls := []struct {
		name string
		args []any
	}{
		{"indent", []any{4, "a\nb\n"}},
		{"nindent", []any{2, "a\nb"}},
		{"indent", []any{70, "\na\n\nb\n"}},
		{"nindent", []any{0, ""}},
		{"replace", []any{"a", "xyz", "banana"}},
		{"replace", []any{"", "-", "héllo"}},
		{"wrapWith", []any{3, "", "abc def ghijkl"}},
		{"wrapWith", []any{5, "<br>", "abc def ghijkl"}},
		{"repeat", []any{3, "ab"}},
		{"join", []any{",", []any{1, "a", nil, []int{2}}}},
		{"toJson", []any{map[string]any{"a": []any{1, "<b>"}}}},
		{"toPrettyJson", []any{map[string]any{"a": []any{1, "<b>"}}}},
		{"quote", []any{"a", nil, 1}},
		{"squote", []any{"a", nil, 1}},
		{"cat", []any{"a", nil, 1, []any{2}}},
		{"splitList", []any{",", "a,b,,c"}},
		{"split", []any{"", "héllo"}},
		{"splitn", []any{",", 2, "a,b,c"}},
		{"splitn", []any{",", 0, "a,b,c"}},
		{"until", []any{-3}},
		{"chunk", []any{2, []any{1, 2, 3}}},
		{"regexReplaceAll", []any{"(a)(n)", "banana", "${2}$1"}},
		{"regexFindAll", []any{"a.", "banana", -1}},
		{"regexSplit", []any{"n", "banana", 2}},
		{"sortAlpha", []any{[]any{"b", 1, "a"}}},
		{"dict", []any{"a", 1, 2, "b", "c"}},
	}
	for _, c := range calls {
		ft := reflect.TypeOf(sp[c.name])
		args := make([]reflect.Value, len(c.args))
		for i, a := range c.args {
			args[i] = reflect.ValueOf(a)
			if a == nil {
				args[i] = reflect.Zero(ft.In(ft.NumIn() - 1).Elem()) // a nil in ...any
			}
		}
		got := reflect.ValueOf(fm[c.name]).Call(args)[0].Interface()
		want := reflect.ValueOf(sp[c.name]).Call(args)[0].Interface()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s%v = %#v, sprig's is %#v", c.name, c.args, got, want)
		}
	}
	if got, want := fm["printf"].(func(string, ...any) string)("%5d|%-3s|%v", 42, "x", []int{1}), fmt.Sprintf("%5d|%-3s|%v", 42, "x", []int{1}); got != want {
		t.Errorf("printf = %q, want %q", got, want)
	}
}

// TestWriteQuotedIsQuote compares writeQuoted with strconv.Quote.
func TestWriteQuotedIsQuote(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []string{"a", "Z", " ", "~", "\"", "\\", "\n", "\x7f", "\x00", "é", "\xff", "世"}
	for range 3000 {
		var s strings.Builder
		for range rng.IntN(8) {
			s.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		var b strings.Builder
		writeQuoted(&b, s.String())
		if got, want := b.String(), strconv.Quote(s.String()); got != want {
			t.Fatalf("writeQuoted(%q) = %s, want %s", s.String(), got, want)
		}
	}
}
