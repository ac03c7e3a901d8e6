package render

import (
	"regexp"
	"strings"
	"sync"
)

// maxCachedRegexps bounds the compiled-pattern cache; past it, patterns are compiled per call.
const maxCachedRegexps = 1024

// regexCache compiles each pattern once: sprig's regex functions compile on every call,
// which dominated rendering when a template checks every config key.
type regexCache struct {
	mu sync.RWMutex
	m  map[string]*regexp.Regexp
}

func (c *regexCache) compile(pattern string) (*regexp.Regexp, error) {
	c.mu.RLock()
	re, ok := c.m[pattern]
	c.mu.RUnlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[string]*regexp.Regexp{}
	}
	if len(c.m) < maxCachedRegexps {
		c.m[pattern] = re
	}
	c.mu.Unlock()
	return re, nil
}

// install replaces sprig's regex functions with ones that share the cache and are bound to
// st's limits. Their signatures and results are sprig's; an invalid pattern is an error in
// both forms (sprig's non-must forms panic, which text/template also reports as an error).
func (c *regexCache) install(fm map[string]any, st *execState) {
	match := func(pattern, s string) (bool, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return false, err
		}
		return re.MatchString(s), nil
	}
	// The lists of findAll and split are made with at most MaxListLen+1 elements: one more
	// means the result would be too long.
	bounded := func(n int) int {
		if n < 0 || n > st.lim.MaxListLen {
			return st.lim.MaxListLen + 1
		}
		return n
	}
	findAll := func(pattern, s string, n int) ([]string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return []string{}, err
		}
		out := re.FindAllString(s, bounded(n))
		st.list(len(out), elemBytes)
		return out, nil
	}
	find := func(pattern, s string) (string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return "", err
		}
		return re.FindString(s), nil
	}
	replaceAll := func(pattern, s, repl string) (string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return "", err
		}
		st.replacing(re, s, len(repl), strings.Count(repl, "$"))
		return st.str(re.ReplaceAllString(s, repl)), nil
	}
	replaceAllLiteral := func(pattern, s, repl string) (string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return "", err
		}
		st.replacing(re, s, len(repl), 0)
		return st.str(re.ReplaceAllLiteralString(s, repl)), nil
	}
	split := func(pattern, s string, n int) ([]string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return []string{}, err
		}
		out := re.Split(s, bounded(n))
		st.list(len(out), elemBytes)
		return out, nil
	}
	for _, prefix := range []string{"", "must"} {
		name := func(base string) string {
			if prefix == "" {
				return "r" + base
			}
			return "mustR" + base
		}
		fm[name("egexMatch")] = match
		fm[name("egexFindAll")] = findAll
		fm[name("egexFind")] = find
		fm[name("egexReplaceAll")] = replaceAll
		fm[name("egexReplaceAllLiteral")] = replaceAllLiteral
		fm[name("egexSplit")] = split
	}
}

// replacing checks that replacing every match of re in s with a replacement of replLen
// bytes, holding refs references to groups ($1, ${name}), fits in a value. Every match and
// group lies inside s: a first bound needs no matching; when it is too high, one pass over
// the matches gives the exact bound.
func (st *execState) replacing(re *regexp.Regexp, s string, replLen, refs int) {
	limit := st.lim.MaxValueBytes
	if len(s)+(len(s)+1)*replLen+refs*len(s) <= limit {
		st.tick()
		return
	}
	fail(st.checkTime())
	total := len(s)
	re.ReplaceAllStringFunc(s, func(m string) string {
		if total <= limit {
			total += replLen + refs*len(m) - len(m)
		}
		return ""
	})
	if total > limit {
		panic(valueError(st.lim, 0))
	}
}
