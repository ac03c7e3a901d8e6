package render

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/Masterminds/sprig/v3"
)

// funcClass says how the engine keeps a template function from exhausting memory or time
// (the denied functions are not available at all).
type funcClass uint8

const (
	// pure functions return a bool, a number, a value they were given (or an element of
	// one) or a substring of an argument: they allocate nothing a template could pile up,
	// and take time linear in their (bounded) arguments.
	classPure funcClass = iota
	// bounded functions make strings, lists or dicts: they are replaced by a wrapper that
	// refuses a result over MaxValueBytes or MaxListLen (before making it when it could be
	// much larger than the arguments), charges it to MaxAllocBytes and checks the deadline.
	classBounded
)

// funcClasses classifies every function of sprig v3 and text/template's builtins but the
// denied ones; a test fails when sprig adds a function that is not listed here.
var funcClasses = map[string]funcClass{
	// text/template builtins.
	"and": classPure, "or": classPure, "not": classPure, "call": classPure, "index": classPure,
	"slice": classPure, "len": classPure, "eq": classPure, "ne": classPure, "lt": classPure,
	"le": classPure, "gt": classPure, "ge": classPure,
	"print": classBounded, "printf": classBounded, "println": classBounded,
	"html": classBounded, "js": classBounded, "urlquery": classBounded,

	// Predicates, numbers, dates as values.
	"all": classPure, "any": classPure, "contains": classPure, "hasPrefix": classPure,
	"hasSuffix": classPure, "isAbs": classPure, "osIsAbs": classPure, "empty": classPure,
	"hasKey": classPure, "has": classPure, "mustHas": classPure, "kindIs": classPure,
	"typeIs": classPure, "typeIsLike": classPure, "deepEqual": classPure,
	"semverCompare": classPure, "semver": classPure, "regexMatch": classPure,
	"mustRegexMatch": classPure, "atoi": classPure, "int": classPure, "int64": classPure,
	"float64": classPure, "toDecimal": classPure, "add": classPure, "add1": classPure,
	"add1f": classPure, "addf": classPure, "sub": classPure, "subf": classPure,
	"mul": classPure, "mulf": classPure, "div": classPure, "divf": classPure, "mod": classPure,
	"max": classPure, "min": classPure, "biggest": classPure, "maxf": classPure,
	"minf": classPure, "ceil": classPure, "floor": classPure, "round": classPure,
	"toDate": classPure, "mustToDate": classPure, "dateModify": classPure,
	"date_modify": classPure, "mustDateModify": classPure, "must_date_modify": classPure,
	"fail": classPure, "hello": classPure, "seq": classPure,
	"unset": classPure,
	// Values they were given, or elements of them.
	"first": classPure, "last": classPure, "mustFirst": classPure, "mustLast": classPure,
	"get": classPure, "dig": classPure, "default": classPure, "coalesce": classPure,
	"ternary": classPure, "mustSlice": classPure,
	// Substrings of an argument.
	"trim": classPure, "trimAll": classPure, "trimall": classPure, "trimPrefix": classPure,
	"trimSuffix": classPure, "trunc": classPure, "substr": classPure, "base": classPure,
	"ext": classPure, "osBase": classPure, "osExt": classPure, "plural": classPure,
	"regexFind": classPure, "mustRegexFind": classPure,

	// Strings at most a few times the size of their arguments: the result is bounded and
	// charged after it is made.
	"abbrev": classBounded, "abbrevboth": classBounded, "b32dec": classBounded,
	"b32enc": classBounded, "b64dec": classBounded, "b64enc": classBounded,
	"camelcase": classBounded, "kebabcase": classBounded, "snakecase": classBounded,
	"swapcase": classBounded, "title": classBounded, "untitle": classBounded,
	"upper": classBounded, "lower": classBounded, "initials": classBounded,
	"nospace": classBounded, "clean": classBounded, "dir": classBounded,
	"osClean": classBounded, "osDir": classBounded, "regexQuoteMeta": classBounded,
	"adler32sum": classBounded, "sha1sum": classBounded, "sha256sum": classBounded,
	"sha512sum": classBounded, "htmlDate": classBounded, "htmlDateInZone": classBounded,
	"duration": classBounded, "durationRound": classBounded, "unixEpoch": classBounded,
	"kindOf": classBounded, "typeOf": classBounded, "date": classBounded,
	"dateInZone": classBounded, "date_in_zone": classBounded, "decryptAES": classBounded,
	"derivePassword": classBounded, "urlJoin": classBounded, "urlParse": classBounded,
	"buildCustomCert": classBounded,
	// Strings that can be far larger than their arguments: the size is worked out first.
	"repeat": classBounded, "indent": classBounded, "nindent": classBounded,
	"replace": classBounded, "wrap": classBounded, "wrapWith": classBounded,
	"regexReplaceAll": classBounded, "mustRegexReplaceAll": classBounded,
	"regexReplaceAllLiteral": classBounded, "mustRegexReplaceAllLiteral": classBounded,
	// Functions that format any value (fmt, JSON, YAML): the value is walked first, which
	// also refuses a value that contains itself.
	"quote": classBounded, "squote": classBounded, "cat": classBounded,
	"toString": classBounded, "toStrings": classBounded, "join": classBounded,
	"sortAlpha": classBounded, "toJson": classBounded, "mustToJson": classBounded,
	"toPrettyJson": classBounded, "mustToPrettyJson": classBounded,
	"toRawJson": classBounded, "mustToRawJson": classBounded,
	// Lists and dicts.
	"list": classBounded, "tuple": classBounded, "append": classBounded,
	"push": classBounded, "mustAppend": classBounded, "mustPush": classBounded,
	"prepend": classBounded, "mustPrepend": classBounded, "concat": classBounded,
	"chunk": classBounded, "mustChunk": classBounded, "compact": classBounded,
	"mustCompact": classBounded, "initial": classBounded, "mustInitial": classBounded,
	"rest": classBounded, "mustRest": classBounded, "reverse": classBounded,
	"mustReverse": classBounded, "without": classBounded, "mustWithout": classBounded,
	"uniq": classBounded, "mustUniq": classBounded, "keys": classBounded,
	"values": classBounded, "pick": classBounded, "omit": classBounded,
	"pluck": classBounded, "dict": classBounded, "set": classBounded,
	"merge": classBounded, "mustMerge": classBounded, "mergeOverwrite": classBounded,
	"mustMergeOverwrite": classBounded, "deepCopy": classBounded,
	"mustDeepCopy": classBounded, "fromJson": classBounded, "mustFromJson": classBounded,
	"splitList": classBounded, "split": classBounded, "splitn": classBounded,
	"regexSplit": classBounded, "mustRegexSplit": classBounded,
	"regexFindAll": classBounded, "mustRegexFindAll": classBounded,
	"until": classBounded, "untilStep": classBounded,
}

// Bytes charged per element of a list and per entry of a dict a function makes.
const (
	elemBytes  = 16
	entryBytes = 64
)

// allFuncs is sprig's function set without the denied functions, with the bounded
// functions (and text/template's print functions) replaced by wrappers bound to st, and
// fleetform's own functions. The wrappers have sprig's signatures and call sprig's
// functions once the result is known to fit, so results are sprig's, byte for byte.
func allFuncs(st *execState, memo *configMemo, regex *regexCache) template.FuncMap {
	sp := sprig.TxtFuncMap()
	fm := template.FuncMap{}
	for name, f := range sp {
		fm[name] = f
	}
	for _, name := range denied {
		delete(fm, name)
	}
	boundStrings(st, sp, fm)
	boundGrowing(st, sp, fm)
	boundFormatting(st, sp, fm)
	boundLists(st, sp, fm)
	boundDicts(st, sp, fm)
	boundSplits(st, sp, fm)
	regex.install(fm, st)
	fm["fleetformLabels"] = func(d *Data) string { return st.str(fleetformLabels(d)) }
	fm["invalidConfigMapKeys"] = func(v any) []string {
		keys := invalidConfigMapKeys(v)
		st.list(len(keys), elemBytes)
		return keys
	}
	fm["unquote"] = unquote
	if memo != nil {
		fm["toYaml"] = memoize(memo, "toYaml", fm["toYaml"].(func(any) string))
		fm["stringify"] = memoize(memo, "stringify", fm["stringify"].(func(any) string))
		fm["invalidConfigMapKeys"] = memoize(memo, "invalidConfigMapKeys", fm["invalidConfigMapKeys"].(func(any) []string))
	}
	return fm
}

// boundStrings wraps the functions whose string result is at most a few times the size of
// their arguments: the result is bounded and charged once it is made.
func boundStrings(st *execState, sp, fm template.FuncMap) {
	for _, name := range []string{
		"b32dec", "b32enc", "b64dec", "b64enc", "camelcase", "kebabcase", "snakecase",
		"swapcase", "title", "untitle", "upper", "lower", "initials", "nospace", "clean",
		"dir", "osClean", "osDir", "regexQuoteMeta", "adler32sum", "sha1sum", "sha256sum",
		"sha512sum",
	} {
		f := sp[name].(func(string) string)
		fm[name] = func(s string) string { return st.str(f(s)) }
	}
	for _, name := range []string{"htmlDate", "duration", "durationRound", "kindOf", "typeOf"} {
		f := sp[name].(func(any) string)
		fm[name] = func(v any) string { return st.str(f(v)) }
	}
	abbrev := sp["abbrev"].(func(int, string) string)
	fm["abbrev"] = func(n int, s string) string { return st.str(abbrev(n, s)) }
	// wrap replaces spaces with line breaks: its result is never longer than its argument.
	wrap := sp["wrap"].(func(int, string) string)
	fm["wrap"] = func(n int, s string) string { return st.str(wrap(n, s)) }
	abbrevboth := sp["abbrevboth"].(func(int, int, string) string)
	fm["abbrevboth"] = func(l, r int, s string) string { return st.str(abbrevboth(l, r, s)) }
	htmlDateInZone := sp["htmlDateInZone"].(func(any, string) string)
	fm["htmlDateInZone"] = func(d any, z string) string { return st.str(htmlDateInZone(d, z)) }
	unixEpoch := sp["unixEpoch"].(func(time.Time) string)
	fm["unixEpoch"] = func(t time.Time) string { return st.str(unixEpoch(t)) }
	date := sp["date"].(func(string, any) string)
	fm["date"] = func(f string, d any) string { return st.str(date(f, d)) }
	dateInZone := sp["dateInZone"].(func(string, any, string) string)
	fm["dateInZone"] = func(f string, d any, z string) string { return st.str(dateInZone(f, d, z)) }
	fm["date_in_zone"] = fm["dateInZone"]
	decryptAES := sp["decryptAES"].(func(string, string) (string, error))
	fm["decryptAES"] = func(c, k string) (string, error) {
		s, err := decryptAES(c, k)
		if err != nil {
			return "", err
		}
		return st.str(s), nil
	}
	derivePassword := sp["derivePassword"].(func(uint32, string, string, string, string) string)
	fm["derivePassword"] = func(c uint32, t, p, u, s string) string {
		fail(st.checkTime()) // scrypt: about 0.1 s a call
		return st.str(derivePassword(c, t, p, u, s))
	}
	urlJoin := sp["urlJoin"].(func(map[string]any) string)
	fm["urlJoin"] = func(d map[string]any) string { return st.str(urlJoin(d)) }
	urlParse := sp["urlParse"].(func(string) map[string]any)
	fm["urlParse"] = func(s string) map[string]any {
		st.charge(8*entryBytes + 2*len(s))
		return urlParse(s)
	}
	// buildCustomCert returns a value of an unexported sprig type: its wrapper is made with
	// reflection, and charges the size of the certificate and key it is given.
	cert := reflect.ValueOf(sp["buildCustomCert"])
	fm["buildCustomCert"] = reflect.MakeFunc(cert.Type(), func(args []reflect.Value) []reflect.Value {
		st.charge(args[0].Len() + args[1].Len())
		return cert.Call(args)
	}).Interface()
}

// boundGrowing wraps the string functions whose result can be much larger than their
// arguments; the result's size is worked out before it is made.
func boundGrowing(st *execState, sp, fm template.FuncMap) {
	fm["repeat"] = func(count int, s string) string {
		if count < 0 {
			panic(fmt.Errorf("negative count %d", count))
		}
		st.fits(count, len(s), 0)
		return st.str(strings.Repeat(s, count))
	}
	indent := sp["indent"].(func(int, string) string)
	fm["indent"] = func(n int, s string) string {
		if n < 0 {
			return st.str(indent(n, s)) // sprig's error
		}
		lines := strings.Count(s, "\n") + 1
		st.fits(n, lines, len(s))
		return st.str(indentLines(n, lines, s, false))
	}
	nindent := sp["nindent"].(func(int, string) string)
	fm["nindent"] = func(n int, s string) string {
		if n < 0 {
			return st.str(nindent(n, s))
		}
		lines := strings.Count(s, "\n") + 1
		st.fits(n, lines, len(s)+1)
		return st.str(indentLines(n, lines, s, true))
	}
	replace := sp["replace"].(func(string, string, string) string)
	fm["replace"] = func(old, repl, s string) string {
		if d := len(repl) - len(old); d > 0 {
			n := strings.Count(s, old) // for "", the rune boundaries
			st.fits(n, d, len(s))
		}
		return st.str(replace(old, repl, s))
	}
	wrapWith := sp["wrapWith"].(func(int, string, string) string)
	fm["wrapWith"] = func(n int, sep, s string) string {
		lineBreak := sep
		if lineBreak == "" {
			lineBreak = "\n" // goutils' default
		}
		if !st.fitsSize(len(s), 1+len(lineBreak), 0) && wrapCustomLen(s, n, lineBreak) > st.lim.MaxValueBytes {
			panic(valueError(st.lim, 0))
		}
		return st.str(wrapWith(n, sep, s))
	}
}

// indentLines is sprig's indent (newline false) or nindent (true) of s, which has lines
// lines, made in one allocation: they are among the most called functions of a template,
// and sprig's makes the result three times. n is not negative.
func indentLines(n, lines int, s string, newline bool) string {
	var b strings.Builder
	size := n*lines + len(s)
	if newline {
		size++
		b.Grow(size)
		b.WriteByte('\n')
	} else {
		b.Grow(size)
	}
	for {
		writeSpaces(&b, n)
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
}

const spaces64 = "                                                                "

// writeSpaces writes n spaces to b.
func writeSpaces(b *strings.Builder, n int) {
	for n > len(spaces64) {
		b.WriteString(spaces64)
		n -= len(spaces64)
	}
	b.WriteString(spaces64[:n])
}

// fits fails unless a result of n*size+rest bytes fits in a value.
func (st *execState) fits(n, size, rest int) {
	if !st.fitsSize(n, size, rest) {
		panic(valueError(st.lim, 0))
	}
	st.tick()
}

// fitsSize reports whether n*size+rest bytes fit in a value, without overflowing.
func (st *execState) fitsSize(n, size, rest int) bool {
	limit := st.lim.MaxValueBytes
	return n >= 0 && size >= 0 && rest <= limit && (size == 0 || n <= (limit-rest)/size)
}

// wrapCustomLen is the length of goutils' WrapCustom(str, wrapLength, newLineStr, true)
// (sprig's wrapWith), worked out without making it.
func wrapCustomLen(str string, wrapLength int, newLineStr string) int {
	if str == "" {
		return 0
	}
	if wrapLength < 1 {
		wrapLength = 1
	}
	n, offset := 0, 0
	for len(str)-offset > wrapLength {
		if str[offset] == ' ' {
			offset++
			continue
		}
		end := wrapLength + offset + 1
		if at := strings.LastIndex(str[offset:end], " ") + offset; at >= offset {
			n += at - offset + len(newLineStr)
			offset = at + 1
		} else {
			n += wrapLength + len(newLineStr)
			offset += wrapLength
		}
	}
	return n + len(str) - offset
}

// formatting checks the arguments of a function that formats them (with fmt, JSON or
// YAML) and writes extra bytes more: the sum of their sizes must fit in a value.
func (st *execState) formatting(vs []any, extra int) {
	total := extra
	for _, v := range vs {
		if s, ok := v.(string); ok {
			total += len(s) + 1
		} else {
			total += st.check(v).bytes
		}
	}
	if total > st.lim.MaxValueBytes {
		panic(valueError(st.lim, 0))
	}
	st.tick()
}

// boundFormatting wraps the functions that format any value with fmt, JSON or YAML.
func boundFormatting(st *execState, sp, fm template.FuncMap) {
	variadic := func(f func(...any) string) func(...any) string {
		return func(vs ...any) string {
			st.formatting(vs, 0)
			return st.str(f(vs...))
		}
	}
	fm["print"] = variadic(fmt.Sprint)
	fm["println"] = variadic(fmt.Sprintln)
	fm["html"] = variadic(template.HTMLEscaper)
	fm["js"] = variadic(template.JSEscaper)
	fm["urlquery"] = variadic(template.URLQueryEscaper)
	fm["cat"] = variadic(sp["cat"].(func(...any) string))
	fm["squote"] = variadic(sp["squote"].(func(...any) string))
	fm["quote"] = variadic(quote)
	fm["printf"] = func(format string, vs ...any) string {
		st.formatting(vs, len(format)+printfPadding(format))
		return st.str(fmt.Sprintf(format, vs...))
	}
	one := func(f func(any) string) func(any) string {
		return func(v any) string {
			st.formatting([]any{v}, 0)
			return st.str(f(v))
		}
	}
	fm["toString"] = one(strval)
	fm["shquote"] = one(shquote)
	fm["hash"] = one(hashValue)
	fm["toYaml"] = one(st.toYaml)
	fm["stringify"] = one(st.stringify)
	for _, name := range []string{"toJson", "toPrettyJson", "toRawJson"} {
		fm[name] = one(sp[name].(func(any) string))
	}
	for _, name := range []string{"mustToJson", "mustToPrettyJson", "mustToRawJson"} {
		f := sp[name].(func(any) (string, error))
		fm[name] = func(v any) (string, error) {
			st.formatting([]any{v}, 0)
			s, err := f(v)
			if err != nil {
				return "", err
			}
			return st.str(s), nil
		}
	}
	join := sp["join"].(func(string, any) string)
	fm["join"] = func(sep string, v any) string {
		n := lenOf(v)
		st.fits(n, len(sep), 0)
		st.formatting([]any{v}, n*len(sep))
		return st.str(join(sep, v))
	}
	for _, name := range []string{"toStrings", "sortAlpha"} {
		f := sp[name].(func(any) []string)
		fm[name] = func(v any) []string {
			z := st.check(v)
			st.list(lenOf(v), elemBytes)
			st.charge(z.bytes)
			return f(v)
		}
	}
}

// printfPadding is the most padding the widths and precisions of printf's verbs can add
// (fmt caps each at 1e6; a width or precision given by * counts as that).
func printfPadding(format string) int {
	const most = 1_000_000
	total := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
	flags:
		for i++; i < len(format); i++ {
			switch c := format[i]; {
			case c == '*':
				total += most
			case c >= '0' && c <= '9':
				n := 0
				for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
					n = min(n*10+int(format[i]-'0'), most)
				}
				total += n
				i--
			case strings.IndexByte("+-# .[]", c) < 0:
				break flags // the verb
			}
		}
	}
	return total
}

// lenOf is the length of a list (a slice or an array); 0 for anything else.
func lenOf(v any) int {
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		return rv.Len()
	}
	return 0
}

// boundLists wraps the functions that make lists.
func boundLists(st *execState, sp, fm template.FuncMap) {
	fm["list"] = func(vs ...any) []any {
		st.list(len(vs), elemBytes)
		return vs
	}
	fm["tuple"] = fm["list"]
	for _, name := range []string{"append", "push", "prepend"} {
		f := sp[name].(func(any, any) []any)
		fm[name] = func(l, v any) []any {
			st.list(lenOf(l)+1, elemBytes)
			return f(l, v)
		}
	}
	for _, name := range []string{"mustAppend", "mustPush", "mustPrepend"} {
		f := sp[name].(func(any, any) ([]any, error))
		fm[name] = func(l, v any) ([]any, error) {
			st.list(lenOf(l)+1, elemBytes)
			return f(l, v)
		}
	}
	concat := sp["concat"].(func(...any) any)
	fm["concat"] = func(ls ...any) any {
		n := 0
		for _, l := range ls {
			n += lenOf(l)
		}
		st.list(n, elemBytes)
		return concat(ls...)
	}
	chunk := sp["chunk"].(func(int, any) [][]any)
	fm["chunk"] = func(size int, l any) [][]any {
		st.chunking(size, l)
		return chunk(size, l)
	}
	mustChunk := sp["mustChunk"].(func(int, any) ([][]any, error))
	fm["mustChunk"] = func(size int, l any) ([][]any, error) {
		st.chunking(size, l)
		return mustChunk(size, l)
	}
	boundFilters(st, sp, fm)
	fm["until"] = func(n int) []int {
		if n < 0 {
			return st.seq(0, n, -1)
		}
		return st.seq(0, n, 1)
	}
	fm["untilStep"] = st.seq
	fm["seq"] = func(...int) (string, error) { return "", errors.New("seq is not available; use until") }
}

// boundFilters wraps the functions that return at most the elements of the list they are
// given.
func boundFilters(st *execState, sp, fm template.FuncMap) {
	for _, name := range []string{"compact", "initial", "rest", "reverse"} {
		f := sp[name].(func(any) []any)
		fm[name] = func(l any) []any {
			st.list(lenOf(l), elemBytes)
			return f(l)
		}
	}
	for _, name := range []string{"mustCompact", "mustInitial", "mustRest", "mustReverse"} {
		f := sp[name].(func(any) ([]any, error))
		fm[name] = func(l any) ([]any, error) {
			st.list(lenOf(l), elemBytes)
			return f(l)
		}
	}
	without := sp["without"].(func(any, ...any) []any)
	fm["without"] = func(l any, omit ...any) []any {
		st.list(lenOf(l), elemBytes)
		return without(l, omit...)
	}
	mustWithout := sp["mustWithout"].(func(any, ...any) ([]any, error))
	fm["mustWithout"] = func(l any, omit ...any) ([]any, error) {
		st.list(lenOf(l), elemBytes)
		return mustWithout(l, omit...)
	}
	mustUniq := sp["mustUniq"].(func(any) ([]any, error))
	fm["mustUniq"] = func(l any) ([]any, error) { return st.uniq(l, mustUniq) }
	fm["uniq"] = func(l any) []any {
		out, err := st.uniq(l, mustUniq)
		fail(err) // sprig's uniq panics on what is not a list
		return out
	}
}

// chunking bounds chunk: every element of the list, and a list per chunk.
func (st *execState) chunking(size int, l any) {
	if size < 1 {
		panic(fmt.Errorf("chunk size %d is not positive", size))
	}
	n := lenOf(l)
	st.list(n, elemBytes)
	st.charge((n/size + 1) * elemBytes)
}

// seq is sprig's untilStep, with its length worked out (without overflow) and bounded
// before the list is made.
func (st *execState) seq(start, stop, step int) []int {
	var n uint64
	switch {
	case step > 0 && start < stop:
		n = (uint64(stop)-uint64(start)-1)/uint64(step) + 1 //nolint:gosec // two's complement: the difference of start < stop is exact modulo 2^64, step > 0
	case step < 0 && start > stop:
		n = (uint64(start)-uint64(stop)-1)/(uint64(-(step+1))+1) + 1 //nolint:gosec // as above, with -(step+1) >= 0 (no overflow at MinInt)
	default:
		return []int{}
	}
	if n > uint64(st.lim.MaxListLen) { //nolint:gosec // limits are not negative
		panic(&LimitError{Limit: "MaxListLen", msg: fmt.Sprintf("result would have %d elements, over the %d limit on a list or dict (MaxListLen)", n, st.lim.MaxListLen)})
	}
	st.list(int(n), 8) //nolint:gosec // n <= MaxListLen, an int
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step // wraps like sprig's i += step, and stays in range
	}
	return out
}

// uniq is sprig's uniq (first occurrences, in order, compared with reflect.DeepEqual) in
// linear time for the elements that equal another exactly when == says so, with a
// deadline check while comparing the others.
func (st *execState) uniq(l any, sprigUniq func(any) ([]any, error)) ([]any, error) {
	rv := reflect.ValueOf(l)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return sprigUniq(l)
	}
	st.list(rv.Len(), elemBytes)
	out := []any{}
	seen := map[any]bool{}
	var others []any
	for i := range rv.Len() {
		item := rv.Index(i).Interface()
		if comparableScalar(item) {
			if !seen[item] {
				seen[item] = true
				out = append(out, item)
			}
			continue
		}
		found := false
		for _, o := range others {
			st.tick()
			if reflect.DeepEqual(item, o) {
				found = true
				break
			}
		}
		if !found {
			others = append(others, item)
			out = append(out, item)
		}
	}
	return out, nil
}

// comparableScalar reports whether reflect.DeepEqual(v, w) is v == w for every w: v is nil
// or of a basic kind (numbers, strings, bools), where both compare type and value.
func comparableScalar(v any) bool {
	if v == nil {
		return true
	}
	switch reflect.TypeOf(v).Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128, reflect.String:
		return true
	}
	return false
}

// boundDicts wraps the functions that make or grow dicts, and those that copy values.
func boundDicts(st *execState, sp, fm template.FuncMap) {
	dict := sp["dict"].(func(...any) map[string]any)
	fm["dict"] = func(vs ...any) map[string]any {
		keyBytes := 0
		for i := 0; i < len(vs); i += 2 {
			if _, ok := vs[i].(string); !ok {
				keyBytes += st.check(vs[i]).bytes // a key is formatted
			}
		}
		st.list((len(vs)+1)/2, entryBytes)
		st.charge(keyBytes)
		return dict(vs...)
	}
	set := sp["set"].(func(map[string]any, string, any) map[string]any)
	fm["set"] = func(d map[string]any, k string, v any) map[string]any {
		if _, ok := d[k]; !ok {
			if len(d)+1 > st.lim.MaxListLen {
				panic(listError(st.lim, len(d)+1))
			}
			st.charge(entryBytes)
		}
		return set(d, k, v)
	}
	for _, name := range []string{"merge", "mergeOverwrite"} {
		f := sp[name].(func(map[string]any, ...map[string]any) any)
		fm[name] = func(dst map[string]any, srcs ...map[string]any) any {
			st.merging(dst, srcs)
			return f(dst, srcs...)
		}
	}
	for _, name := range []string{"mustMerge", "mustMergeOverwrite"} {
		f := sp[name].(func(map[string]any, ...map[string]any) (any, error))
		fm[name] = func(dst map[string]any, srcs ...map[string]any) (any, error) {
			st.merging(dst, srcs)
			return f(dst, srcs...)
		}
	}
	boundCopies(st, sp, fm)
	keys := sp["keys"].(func(...map[string]any) []string)
	fm["keys"] = func(ds ...map[string]any) []string {
		n := 0
		for _, d := range ds {
			n += len(d)
		}
		st.list(n, elemBytes)
		return keys(ds...)
	}
	values := sp["values"].(func(map[string]any) []any)
	fm["values"] = func(d map[string]any) []any {
		st.list(len(d), elemBytes)
		return values(d)
	}
	for _, name := range []string{"pick", "omit"} {
		f := sp[name].(func(map[string]any, ...string) map[string]any)
		fm[name] = func(d map[string]any, ks ...string) map[string]any {
			st.list(len(d), entryBytes)
			return f(d, ks...)
		}
	}
	pluck := sp["pluck"].(func(string, ...map[string]any) []any)
	fm["pluck"] = func(k string, ds ...map[string]any) []any {
		st.list(len(ds), elemBytes)
		return pluck(k, ds...)
	}
}

// boundCopies wraps the functions that copy or decode values.
func boundCopies(st *execState, sp, fm template.FuncMap) {
	// A copy has a node for every node of the value; decoded JSON has its strings too.
	copying := func(v any, strs bool) {
		z := st.check(v)
		n := z.nodes * entryBytes
		if strs {
			n += z.bytes
		}
		st.charge(n)
	}
	deepCopy := sp["deepCopy"].(func(any) any)
	fm["deepCopy"] = func(v any) any {
		copying(v, false)
		return deepCopy(v)
	}
	mustDeepCopy := sp["mustDeepCopy"].(func(any) (any, error))
	fm["mustDeepCopy"] = func(v any) (any, error) {
		copying(v, false)
		return mustDeepCopy(v)
	}
	fromJSON := sp["fromJson"].(func(string) any)
	fm["fromJson"] = func(s string) any {
		v := fromJSON(s)
		copying(v, true)
		return v
	}
	mustFromJSON := sp["mustFromJson"].(func(string) (any, error))
	fm["mustFromJson"] = func(s string) (any, error) {
		v, err := mustFromJSON(s)
		if err == nil {
			copying(v, true)
		}
		return v, err
	}
}

// merging bounds merge and mergeOverwrite: every node of the sources may be added to
// dst, and its top level may get every top-level key of the sources.
func (st *execState) merging(dst map[string]any, srcs []map[string]any) {
	nodes, top := 0, len(dst)
	for _, src := range srcs {
		nodes += st.check(src).nodes
		top += len(src)
	}
	if top > st.lim.MaxListLen {
		panic(listError(st.lim, top))
	}
	st.charge(nodes * entryBytes)
}

// boundSplits wraps the functions that split strings: the number of parts is counted
// before the list or dict is made.
func boundSplits(st *execState, sp, fm template.FuncMap) {
	// parts is the number of parts strings.SplitN(s, sep, n) makes.
	parts := func(s, sep string, n int) int {
		c := utf8.RuneCountInString(s)
		if sep != "" {
			c = strings.Count(s, sep) + 1
		}
		if n > 0 {
			c = min(c, n)
		}
		return c
	}
	splitList := sp["splitList"].(func(string, string) []string)
	fm["splitList"] = func(sep, s string) []string {
		st.list(parts(s, sep, -1), elemBytes)
		return splitList(sep, s)
	}
	split := sp["split"].(func(string, string) map[string]string)
	fm["split"] = func(sep, s string) map[string]string {
		st.list(parts(s, sep, -1), entryBytes)
		return split(sep, s)
	}
	splitn := sp["splitn"].(func(string, int, string) map[string]string)
	fm["splitn"] = func(sep string, n int, s string) map[string]string {
		if n != 0 {
			st.list(parts(s, sep, n), entryBytes)
		}
		return splitn(sep, n, s)
	}
}
