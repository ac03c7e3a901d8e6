package render

import (
	"regexp"
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

// install replaces sprig's regex functions with ones that share the cache. Their
// signatures and results are sprig's; an invalid pattern is an error in both forms (sprig's
// non-must forms panic, which text/template also reports as an error).
func (c *regexCache) install(fm map[string]any) {
	match := func(pattern, s string) (bool, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return false, err
		}
		return re.MatchString(s), nil
	}
	findAll := func(pattern, s string, n int) ([]string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return []string{}, err
		}
		return re.FindAllString(s, n), nil
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
		return re.ReplaceAllString(s, repl), nil
	}
	replaceAllLiteral := func(pattern, s, repl string) (string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return "", err
		}
		return re.ReplaceAllLiteralString(s, repl), nil
	}
	split := func(pattern, s string, n int) ([]string, error) {
		re, err := c.compile(pattern)
		if err != nil {
			return []string{}, err
		}
		return re.Split(s, n), nil
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
