// Package compose computes the platform configuration of every assignment: the
// platform-config ConfigMaps (and Azure App Configuration keys) whose labels match the
// (cluster type, deployment target) pair, merged in an explicit precedence order, with the
// provenance of every value and JSON Schema validation. It is pure: values in, values out.
package compose

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// Source says which object, file and line set a value: a platform-config ConfigMap's (Kind,
// Name, and Level in the layered mode), or a values file's of the application team's flow
// (Repo: source, config or "command line" for --set, which has no line).
type Source struct {
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Repo string `json:"repo,omitempty"`
	// Level is the precedence level of the source in the layered mode.
	Level string `json:"level,omitempty"`
}

// String is "repo file:line", or "repo file" without a line.
func (s Source) String() string {
	if s.Line == 0 {
		return s.Repo + " " + s.File
	}
	return fmt.Sprintf("%s %s:%d", s.Repo, s.File, s.Line)
}

// Value is an effective config value with its provenance.
type Value struct {
	// Value is a string, or []any / map[string]any for structured values.
	Value  any    `json:"value"`
	Source Source `json:"source"`
	// Shadowed are the lower-precedence values of the same key, nearest first, each as its
	// own source set it. Structured values were merged into Value rather than replaced.
	Shadowed []Shadowed `json:"shadowed"`
}

// Shadowed is a lower-precedence value and its source.
type Shadowed struct {
	Value  any    `json:"value"`
	Source Source `json:"source"`
}

// Config is the composed configuration of an assignment. Configs are shared between
// assignments with the same sources and must not be modified.
type Config struct {
	// Data is the merged configuration: the template's .ConfigData.
	Data map[string]any
	// Values holds every key's provenance.
	Values map[string]*Value
	// Digest identifies the config's data (for caches and incremental rendering): equal
	// digests mean equal Data. Configs with equal Data may still come from different
	// sources, so the Digest says nothing about Values.
	Digest uint64
}

// contribution is one source of keys: a ConfigMap, or one Azure App Configuration key.
type contribution struct {
	labels map[string]string
	level  level
	name   string
	keys   []string // sorted
	// azureKey is the full key (l1.v1....KEY) of an Azure App Configuration source.
	azureKey string
	values   map[string]any
	lines    map[string]int
	src      Source
	// raw identifies the source's name, labels and raw values (see Composer.TypeDigest).
	raw [32]byte
}

// Composer composes configs for the assignments of one snapshot. Its methods are safe for
// concurrent use.
type Composer struct {
	contribs []contribution // in precedence order, lowest first
	ix       *index
	schemas  *schemaSet
	// types is what TypeDigest needs, made on its first call.
	types     typeDigests
	typesOnce sync.Once

	mu    sync.Mutex
	cache map[string]*Config
	// schemaDigests holds SchemaDigest by the signature of the schemas that apply, for
	// targets without schemas of their own (hashing the schemas' text for every one of a
	// million assignments was a tenth of a no-op apply).
	schemaDigests sync.Map
}

// New prepares composition for a snapshot: it parses every ConfigMap value once and orders
// the sources by the environment's precedence mode.
func New(s *controlplane.Snapshot) *Composer {
	c := &Composer{cache: map[string]*Config{}}
	c.contribs = contributions(s.ConfigMaps, s.Precedence())
	labels := make([]map[string]string, len(c.contribs))
	for i := range c.contribs {
		labels[i] = c.contribs[i].labels
	}
	c.ix = newIndex(labels)
	c.schemas = newSchemaSet(s.ConfigSchemas)
	c.types.precedence = s.Precedence()
	return c
}

// contributions turns ConfigMaps into sources in precedence order. Layered: by level, then
// platform ConfigMaps by name, then Azure keys by length. Name mode (Kalypso): platform
// ConfigMaps by name, then Azure keys.
func contributions(cms []*controlplane.ConfigMap, precedence string) []contribution {
	var platformCMs, azure []contribution
	for _, cm := range cms {
		// Both, as Kalypso reads them: a platform ConfigMap named azure-app-config… is read
		// as one and as Azure keys.
		if cm.Metadata.Labels[v1alpha1.LabelPlatformConfig] == "true" {
			platformCMs = append(platformCMs, fromConfigMap(cm))
		}
		if strings.HasPrefix(cm.Metadata.Name, "azure-app-config") {
			azure = append(azure, fromAzureConfigMap(cm)...)
		}
	}
	sort.SliceStable(platformCMs, func(i, j int) bool { return platformCMs[i].name < platformCMs[j].name })
	sort.SliceStable(azure, func(i, j int) bool {
		if azure[i].name != azure[j].name {
			return azure[i].name < azure[j].name
		}
		return len(azure[i].azureKey) < len(azure[j].azureKey) // more qualified keys later
	})
	all := append(platformCMs, azure...)
	if precedence != v1alpha1.PrecedenceName {
		sort.SliceStable(all, func(i, j int) bool { return all[i].level < all[j].level })
	}
	return all
}

func fromConfigMap(cm *controlplane.ConfigMap) contribution {
	c := contribution{
		labels: matchLabels(cm.Metadata.Labels), name: cm.Metadata.Name,
		values: make(map[string]any, len(cm.Data)), lines: make(map[string]int, len(cm.Data)),
		src: Source{Kind: "ConfigMap", Name: cm.Metadata.Name, File: cm.Source.File, Line: cm.Source.Line, Repo: cm.Source.Repo},
	}
	c.level = levelOf(c.labels)
	c.src.Level = c.level.String()
	for k, raw := range cm.Data {
		c.keys = append(c.keys, k)
		c.values[k] = ParseValue(raw)
		c.lines[k] = cmp.Or(cm.Source.LineOf("data."+k), cm.Source.Line)
	}
	sort.Strings(c.keys)
	c.raw = rawDigest(c.name, "", c.labels, c.keys, cm.Data)
	return c
}

// fromAzureConfigMap splits an azure-app-config ConfigMap into one source per key: a key
// l1.v1.l2.v2.KEY applies where labels {l1: v1, l2: v2} match; odd leftovers are dropped.
func fromAzureConfigMap(cm *controlplane.ConfigMap) []contribution {
	var out []contribution
	for _, full := range slices.Sorted(maps.Keys(cm.Data)) {
		parts := strings.Split(full, ".")
		key := parts[len(parts)-1]
		labels := map[string]string{}
		for i := 0; i+1 < len(parts)-1; i += 2 {
			labels[parts[i]] = parts[i+1]
		}
		lv := levelOf(labels)
		raw := rawDigest(cm.Metadata.Name, full, labels, []string{key}, map[string]string{key: cm.Data[full]})
		out = append(out, contribution{raw: raw,
			labels: labels, level: lv, name: cm.Metadata.Name, keys: []string{key}, azureKey: full,
			values: map[string]any{key: ParseValue(cm.Data[full])},
			lines:  map[string]int{key: cmp.Or(cm.Source.LineOf("data."+full), cm.Source.Line)},
			src: Source{Kind: "ConfigMap", Name: cm.Metadata.Name + ":" + full, File: cm.Source.File,
				Line: cm.Source.Line, Repo: cm.Source.Repo, Level: lv.String()},
		})
	}
	return out
}

func matchLabels(ls map[string]string) map[string]string {
	out := make(map[string]string, len(ls))
	for k, v := range ls {
		if !ignoredLabels[k] {
			out[k] = v
		}
	}
	return out
}

// Compose returns the config of deployment target dt on cluster type ct.
func (c *Composer) Compose(ct *controlplane.ClusterType, dt *controlplane.DeploymentTarget) *Config {
	var buf [32]int
	matched := c.ix.matches(buf[:0], ct, dt)
	key := signature(matched)
	c.mu.Lock()
	cfg, ok := c.cache[key]
	c.mu.Unlock()
	if ok {
		return cfg
	}
	cfg = c.merge(matched)
	c.mu.Lock()
	if prev, ok := c.cache[key]; ok {
		cfg = prev
	} else {
		c.cache[key] = cfg
	}
	c.mu.Unlock()
	return cfg
}

// digest hashes the canonical JSON of the config (sorted keys), so equal configs have equal
// digests across runs.
func digest(data map[string]any) uint64 {
	b, err := json.Marshal(data)
	if err != nil { // unreachable: values are normalized to JSON types
		b = fmt.Appendf(nil, "%#v", data)
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64()
}

func signature(idx []int) string {
	b := make([]byte, 4*len(idx))
	for i, v := range idx {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v)) //nolint:gosec // v indexes the composer's contributions, far fewer than 2^32
	}
	return string(b)
}

// merge composes the contributions at idx (ascending = lowest precedence first).
func (c *Composer) merge(idx []int) *Config {
	perKey := map[string][]Shadowed{} // every value of a key with its source, lowest first
	for _, i := range idx {
		con := &c.contribs[i]
		for _, k := range con.keys {
			src := con.src
			src.Line = con.lines[k]
			perKey[k] = append(perKey[k], Shadowed{Value: con.values[k], Source: src})
		}
	}
	cfg := &Config{Data: make(map[string]any, len(perKey)), Values: make(map[string]*Value, len(perKey))}
	for k, vs := range perKey {
		last := len(vs) - 1
		v := mergeAll(vs)
		shadowed := make([]Shadowed, last)
		for j := range shadowed {
			shadowed[j] = vs[last-1-j] // nearest first
		}
		cfg.Data[k] = v
		cfg.Values[k] = &Value{Value: v, Source: vs[last].Source, Shadowed: shadowed}
	}
	cfg.Digest = digest(cfg.Data)
	return cfg
}

// mergeAll merges the values in order. A scalar replaces whatever is below it, so merging
// starts at the last scalar.
func mergeAll(vs []Shadowed) any {
	start := 0
	for j := len(vs) - 1; j > 0; j-- {
		switch vs[j].Value.(type) {
		case map[string]any, []any:
			continue
		}
		start = j
		break
	}
	v := vs[start].Value
	for _, s := range vs[start+1:] {
		v = Merge(v, s.Value)
	}
	return v
}
