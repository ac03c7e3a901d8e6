package render

import (
	"bytes"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"
	"github.com/mitchellh/hashstructure"
	yaml "go.yaml.in/yaml/v3"
)

// Limits that keep a template from exhausting memory.
const (
	maxRepeatBytes = 1 << 20
	maxListLen     = 100_000
)

// denied are the sprig functions a template may not call: they read the environment or
// the network, or make output non-deterministic (time, randomness, random salts and keys).
var denied = []string{
	"env", "expandenv", "getHostByName",
	"now", "ago",
	"randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randBytes", "randInt", "uuidv4", "shuffle",
	"genPrivateKey", "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey",
	"genSignedCert", "genSignedCertWithKey", "encryptAES", "bcrypt", "htpasswd",
}

// mutating are the sprig functions that change a dict in place; a template that uses one
// gets its own copy of the template data.
var mutating = map[string]bool{
	"set": true, "unset": true, "merge": true, "mergeOverwrite": true, "mustMerge": true, "mustMergeOverwrite": true,
}

// FuncMap returns the hardened function set templates run with: sprig v3 without the
// denied functions and with bounded list builders, plus Kalypso's toYaml, stringify, hash
// and unquote, and fleetform's shquote.
func FuncMap() template.FuncMap { return funcMap(nil) }

// funcMap is FuncMap with the pure functions of a config memoized for the configs
// registered in memo.
func funcMap(memo *configMemo) template.FuncMap {
	fm := sprig.TxtFuncMap()
	for _, name := range denied {
		delete(fm, name)
	}
	fm["repeat"] = boundedRepeat
	fm["until"] = func(n int) ([]int, error) { return boundedSeq(0, n, 1) }
	fm["untilStep"] = boundedSeq
	fm["seq"] = func(...int) (string, error) { return "", fmt.Errorf("seq is not available; use until") }
	(&regexCache{}).install(fm)
	fm["quote"] = quote
	fm["toYaml"] = toYaml
	fm["stringify"] = stringify
	fm["invalidConfigMapKeys"] = invalidConfigMapKeys
	fm["fleetformLabels"] = fleetformLabels
	if memo != nil {
		fm["toYaml"] = wrap(memo, "toYaml", toYaml)
		fm["stringify"] = wrap(memo, "stringify", stringify)
		fm["invalidConfigMapKeys"] = wrap(memo, "invalidConfigMapKeys", invalidConfigMapKeys)
	}
	fm["hash"] = hashValue
	fm["unquote"] = unquote
	fm["shquote"] = shquote
	return fm
}

func boundedRepeat(count int, s string) (string, error) {
	if count < 0 || count*len(s) > maxRepeatBytes {
		return "", fmt.Errorf("repeat: result larger than %d bytes", maxRepeatBytes)
	}
	return strings.Repeat(s, count), nil
}

func boundedSeq(start, stop, step int) ([]int, error) {
	if step == 0 {
		return nil, nil
	}
	n := (stop - start) / step
	if n > maxListLen {
		return nil, fmt.Errorf("list longer than %d elements", maxListLen)
	}
	out := make([]int, 0, max(n, 0))
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		out = append(out, i)
	}
	return out, nil
}

// toYaml marshals v as YAML with 4-space indentation and sorted keys, without the final
// newline; on error it returns "" (Kalypso's behaviour).
func toYaml(v any) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	if err := enc.Close(); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// stringify renders a map as YAML whose top-level list and map values are turned into YAML
// strings, so that structured config fits in a ConfigMap's string data. (Kalypso misses
// nested maps; fleetform stringifies both.)
func stringify(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		return toYaml(v)
	}
	out := maps.Clone(m)
	for k, e := range out {
		switch e.(type) {
		case map[string]any, []any:
			out[k] = toYaml(e) + "\n"
		}
	}
	return toYaml(out)
}

// fleetformLabels returns the labels every built-in template puts on its objects, one per
// line (app.kubernetes.io/managed-by and fleetform.io/{environment,cluster-type,workspace,
// workload,deployment-target}), for `{{ fleetformLabels $ | nindent N }}`.
func fleetformLabels(d *Data) string {
	var b strings.Builder
	b.Grow(256)
	b.WriteString("app.kubernetes.io/managed-by: fleetform")
	for _, kv := range [...][2]string{
		{"environment", d.Environment}, {"cluster-type", d.ClusterType}, {"workspace", d.Workspace},
		{"workload", d.Workload}, {"deployment-target", d.DeploymentTargetName},
	} {
		b.WriteString("\nfleetform.io/")
		b.WriteString(kv[0])
		b.WriteString(": ")
		b.WriteString(strconv.Quote(kv[1]))
	}
	return b.String()
}

// quote is sprig's quote (each non-nil argument as a Go-quoted string, space separated)
// without fmt: it is the most called function of most templates.
func quote(args ...any) string {
	if len(args) == 1 {
		if s, ok := args[0].(string); ok {
			return strconv.Quote(s)
		}
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		if a != nil {
			out = append(out, strconv.Quote(strval(a)))
		}
	}
	return strings.Join(out, " ")
}

// strval is sprig's conversion of a value to a string.
func strval(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case error:
		return x.Error()
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprintf("%v", x)
	}
}

// configMapKeyRE is what a ConfigMap data key may be (Kubernetes' IsConfigMapKey).
var configMapKeyRE = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// invalidConfigMapKeys returns the keys of a map that cannot be ConfigMap data keys, sorted.
func invalidConfigMapKeys(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	var bad []string
	for k := range m {
		if !configMapKeyRE.MatchString(k) || k == "." || k == ".." || len(k) > 253 {
			bad = append(bad, k)
		}
	}
	sort.Strings(bad)
	return bad
}

// hashValue is Kalypso's hash: the hashstructure (v1) hash of v, in decimal.
func hashValue(v any) string {
	h, err := hashstructure.Hash(v, nil)
	if err != nil {
		return ""
	}
	return strconv.FormatUint(h, 10)
}

// unquote trims spaces, then double quotes, then single quotes; non-strings give "".
func unquote(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	return strings.Trim(strings.Trim(strings.TrimSpace(s), `"`), "'")
}

// shquote quotes a value for a POSIX shell: 'it'\”s'.
func shquote(v any) string {
	s := fmt.Sprint(v)
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
