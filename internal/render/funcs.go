package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mitchellh/hashstructure"
	yaml "go.yaml.in/yaml/v3"
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

// yamlText is Kalypso's toYaml: v as YAML with 4-space indentation and sorted keys,
// without the final newline, and "" on error; its output is bounded by limit bytes (none
// when limit < 0), and over reports that the YAML is longer.
func yamlText(v any, limit int) (s string, over bool) {
	var buf bytes.Buffer
	w := io.Writer(&buf)
	lw := &limitedWriter{w: &buf, left: limit}
	if limit >= 0 {
		w = lw
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(4)
	if err := enc.Encode(v); err != nil {
		return "", errors.Is(err, errTooLarge) || lw.over
	}
	if err := enc.Close(); err != nil {
		return "", lw.over
	}
	return strings.TrimSuffix(buf.String(), "\n"), false
}

// stringifyText is Kalypso's stringify: a map as YAML whose top-level list and map values
// are turned into YAML strings, so that structured config fits in a ConfigMap's string
// data (Kalypso misses nested maps; fleetform stringifies both). Its output is bounded as
// yamlText's.
func stringifyText(v any, limit int) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return yamlText(v, limit)
	}
	out := maps.Clone(m)
	for k, e := range out {
		switch e.(type) {
		case map[string]any, []any:
			s, over := yamlText(e, limit)
			if over {
				return "", true
			}
			out[k] = s + "\n"
		}
	}
	return yamlText(out, limit)
}

// toYaml and stringify of a template: their output is bounded by MaxValueBytes (the value
// was walked before).
func (st *execState) toYaml(v any) string {
	s, over := yamlText(v, st.lim.MaxValueBytes)
	if over {
		panic(valueError(st.lim, 0))
	}
	return s
}

func (st *execState) stringify(v any) string {
	s, over := stringifyText(v, st.lim.MaxValueBytes)
	if over {
		panic(valueError(st.lim, 0))
	}
	return s
}

// fleetformLabels returns the labels every built-in template puts on its objects, one per
// line (app.kubernetes.io/managed-by and fleetform.io/{environment,cluster-type,workspace,
// workload,deployment-target}), for `{{ fleetformLabels $ | nindent N }}`.
func fleetformLabels(d *Data) string {
	if d.labels == "" {
		d.labels = makeFleetformLabels(d)
	}
	return d.labels
}

func makeFleetformLabels(d *Data) string {
	const managedBy, prefix = "app.kubernetes.io/managed-by: fleetform", "\nfleetform.io/"
	labels := [...][2]string{
		{"environment", d.Environment}, {"cluster-type", d.ClusterType}, {"workspace", d.Workspace},
		{"workload", d.Workload}, {"deployment-target", d.DeploymentTargetName},
	}
	size := len(managedBy)
	for _, kv := range labels {
		size += len(prefix) + len(kv[0]) + len(": \"\"") + len(kv[1])
	}
	var b strings.Builder
	b.Grow(size) // exact unless a value needs escaping
	b.WriteString(managedBy)
	for _, kv := range labels {
		b.WriteString(prefix)
		b.WriteString(kv[0])
		b.WriteString(": ")
		writeQuoted(&b, kv[1])
	}
	return b.String()
}

// writeQuoted writes strconv.Quote(s) to b, without making it when s needs no escaping.
func writeQuoted(b *strings.Builder, s string) {
	for i := range len(s) {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			b.WriteString(strconv.Quote(s))
			return
		}
	}
	b.WriteByte('"')
	b.WriteString(s)
	b.WriteByte('"')
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
