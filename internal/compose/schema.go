package compose

import (
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schemacheck"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// maxCoercionPasses bounds schema-directed coercion (one pass per nesting of failures).
const maxCoercionPasses = 8

// schemaRef is one schema that applies to an assignment, and where it was written.
type schemaRef struct {
	text   string
	source controlplane.Source
	path   string
	kind   string
	name   string
}

// schemaSet holds the ConfigSchemas of a snapshot, compiled once per distinct text.
type schemaSet struct {
	schemas []schemaRef
	ix      *index

	mu       sync.Mutex
	compiled map[string]compiled
	// results are the violations by (config data, schema). They hold no provenance:
	// configs with equal data may come from different ConfigMaps.
	results map[resultKey][]violation
}

type compiled struct {
	schema *jsonschema.Schema
	err    error
}

type resultKey struct {
	config uint64
	schema string
}

func newSchemaSet(cs []*controlplane.ConfigSchema) *schemaSet {
	s := &schemaSet{compiled: map[string]compiled{}, results: map[resultKey][]violation{}}
	sorted := append([]*controlplane.ConfigSchema(nil), cs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Metadata.Name < sorted[j].Metadata.Name })
	labels := make([]map[string]string, len(sorted))
	for i, c := range sorted {
		s.schemas = append(s.schemas, schemaRef{text: c.Spec.Schema, source: c.Source, path: "spec.schema", kind: "ConfigSchema", name: c.Metadata.Name})
		labels[i] = matchLabels(c.Metadata.Labels)
	}
	s.ix = newIndex(labels)
	return s
}

// SchemaDigest identifies the schemas that apply to (ct, dt): equal digests mean the same
// schema texts in the same order.
func (c *Composer) SchemaDigest(ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) uint64 {
	var buf [8]int
	matched := c.schemas.ix.matches(buf[:0], ct, dt)
	if len(dt.ConfigSchemas) > 0 {
		return c.schemaDigest(matched, dt)
	}
	key := signature(matched)
	if d, ok := c.schemaDigests.Load(key); ok {
		return d.(uint64)
	}
	d := c.schemaDigest(matched, dt)
	c.schemaDigests.Store(key, d)
	return d
}

// schemaDigest hashes the text of the schemas matched and of dt's own schemas.
func (c *Composer) schemaDigest(matched []int, dt *controlplane.DeploymentTarget) uint64 {
	h := fnv.New64a()
	for _, i := range matched {
		h.Write([]byte(c.schemas.schemas[i].text))
		h.Write([]byte{0})
	}
	for _, s := range dt.ConfigSchemas {
		h.Write([]byte(s.Text))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// Validate checks cfg against every ConfigSchema that applies to (ct, dt) and every schema
// of dt. It returns one diagnostic per violation, located at the schema.
func (c *Composer) Validate(cfg *Config, ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) []controlplane.Diagnostic {
	var refs []schemaRef
	var buf [8]int
	for _, i := range c.schemas.ix.matches(buf[:0], ct, dt) {
		refs = append(refs, c.schemas.schemas[i])
	}
	kind, name := "Workload", dt.Workload // unfolded from a Workload
	if dt.Path == "" {
		kind, name = "DeploymentTarget", dt.Name // written as a DeploymentTarget document
	}
	for _, s := range dt.ConfigSchemas {
		refs = append(refs, schemaRef{text: s.Text, source: s.Source, path: s.Path, kind: kind, name: name})
	}
	var diags []controlplane.Diagnostic
	for _, ref := range refs {
		for _, msg := range describe(cfg, c.schemas.check(cfg, ref.text)) {
			hint := "fix the value where it is set, or the schema"
			if strings.HasPrefix(msg, invalidSchema) {
				hint = "fix the schema"
			}
			d := ref.source.Diag(ref.path, fmt.Sprintf("config of %s on %s: %s", dt.Name, ct.Metadata.Name, msg), hint)
			d.Kind, d.Name = ref.kind, ref.name
			diags = append(diags, d)
		}
	}
	return diags
}

// invalidSchema starts the message of a schema that does not compile.
const invalidSchema = "invalid schema: "

// violation is a schema violation: its message and the top-level key it is about ("" for
// the whole config).
type violation struct {
	msg, key string
}

// check validates cfg against one schema text, caching by (config data, schema).
func (s *schemaSet) check(cfg *Config, text string) []violation {
	key := resultKey{config: cfg.Digest, schema: text}
	s.mu.Lock()
	if r, ok := s.results[key]; ok {
		s.mu.Unlock()
		return r
	}
	s.mu.Unlock()
	msgs := s.validate(cfg, text)
	s.mu.Lock()
	s.results[key] = msgs
	s.mu.Unlock()
	return msgs
}

func (s *schemaSet) validate(cfg *Config, text string) []violation {
	sch, err := s.compile(text)
	if err != nil {
		return []violation{{msg: invalidSchema + err.Error()}}
	}
	inst := any(cfg.Data)
	for range maxCoercionPasses {
		err := sch.Validate(inst)
		if err == nil {
			return nil
		}
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return []violation{{msg: err.Error()}}
		}
		next, changed := coerce(inst, schemacheck.Leaves(ve))
		if !changed {
			return violations(schemacheck.Leaves(ve))
		}
		inst = next
	}
	return []violation{{msg: "schema validation did not settle"}}
}

func (s *schemaSet) compile(text string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.compiled[text]; ok {
		return c.schema, c.err
	}
	sch, err := compileSchema(text)
	s.compiled[text] = compiled{sch, err}
	return sch, err
}

// compileSchema compiles JSON or YAML schema text. References to anything but the schema
// itself are refused: a schema cannot read files or the network.
func compileSchema(text string) (*jsonschema.Schema, error) {
	var node yaml.Node
	var doc any
	if err := yaml.Unmarshal([]byte(text), &node); err != nil {
		return nil, fmt.Errorf("not JSON or YAML: %w", err)
	}
	if err := yamlnode.Decode(&node, &doc); err != nil {
		return nil, fmt.Errorf("not JSON or YAML: %w", err)
	}
	doc = normalize(doc)
	switch doc.(type) {
	case nil:
		return nil, fmt.Errorf("the schema is empty: write a JSON Schema (JSON or YAML text), such as {\"type\": \"object\"}, or remove it")
	case map[string]any, bool:
	default:
		return nil, fmt.Errorf("a JSON Schema is an object (or true/false), not %s", describeJSON(doc))
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	return schemacheck.Compile(fmt.Sprintf("mem:///schema-%x.json", h.Sum64()), doc)
}

// describeJSON names the JSON type of a decoded value, for messages.
func describeJSON(v any) string {
	switch v.(type) {
	case []any:
		return "a list"
	case string:
		return "a string"
	case float64, int, int64, uint64:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// coerce converts the strings that a schema wants as integer, number or boolean, where they
// parse as one: config values are strings, and a string is converted only where the schema
// asks for another type (never blindly, as Kalypso does).
func coerce(inst any, errs []*jsonschema.ValidationError) (any, bool) {
	changed := false
	for _, e := range errs {
		t, ok := e.ErrorKind.(*kind.Type)
		if !ok || t.Got != "string" {
			continue
		}
		cur, ok := lookup(inst, e.InstanceLocation)
		str, isStr := cur.(string)
		if !ok || !isStr {
			continue
		}
		if v, ok := convert(str, t.Want); ok {
			inst = replace(inst, e.InstanceLocation, v)
			changed = true
		}
	}
	return inst, changed
}

func convert(s string, want []string) (any, bool) {
	for _, w := range want {
		switch w {
		case "integer":
			if i, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
				return i, true
			}
		case "number":
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !isNaNOrInf(f) {
				return f, true
			}
		case "boolean":
			if b, err := strconv.ParseBool(strings.TrimSpace(s)); err == nil {
				return b, true
			}
		}
	}
	return nil, false
}

func isNaNOrInf(f float64) bool { return f != f || f > 1e308 || f < -1e308 }

func lookup(v any, path []string) (any, bool) {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// replace returns v with the value at path replaced, copying only the containers on the
// path (shared configs are never modified).
func replace(v any, path []string, nv any) any {
	if len(path) == 0 {
		return nv
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = e
		}
		out[path[0]] = replace(x[path[0]], path[1:], nv)
		return out
	case []any:
		i, _ := strconv.Atoi(path[0])
		out := append([]any(nil), x...)
		out[i] = replace(x[i], path[1:], nv)
		return out
	}
	return v
}

// violations turns validation errors into messages naming the key and the rule, sorted.
func violations(errs []*jsonschema.ValidationError) []violation {
	out := make([]violation, 0, len(errs))
	for _, e := range errs {
		key := strings.Join(e.InstanceLocation, ".")
		if key == "" {
			key = "(config)"
		}
		v := violation{msg: fmt.Sprintf("%s: %s (rule %s)", key, schemacheck.Message(e), schemacheck.Rule(e))}
		if len(e.InstanceLocation) > 0 {
			v.key = e.InstanceLocation[0]
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].msg < out[j].msg })
	return out
}

// describe adds to each violation the source of the value it is about.
func describe(cfg *Config, vs []violation) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		msg := v.msg
		if src, ok := cfg.Values[v.key]; ok && v.key != "" {
			msg += fmt.Sprintf("; value set by %s %s at %s:%d", src.Source.Kind, src.Source.Name, src.Source.File, src.Source.Line)
		}
		out = append(out, msg)
	}
	return out
}
