package compose_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// kalypsoSchema is the draft-07 schema of Kalypso's TestValidateValues (reference 8).
const kalypsoSchema = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "stringRequired": {"type": "string"},
    "intRequired": {"type": "integer", "minimum": -90, "maximum": 90},
    "numberRequired": {"type": "number", "exclusiveMinimum": 0},
    "stringOptional": {"type": "string"},
    "phoneOptional": {"type": "string", "pattern": "^(\\([0-9]{3}\\))?[0-9]{3}-[0-9]{4}$"}
  },
  "required": ["stringRequired", "intRequired", "numberRequired"]
}`

// kalypsoSchemaYAML is the same schema written as YAML.
const kalypsoSchemaYAML = `$schema: http://json-schema.org/draft-07/schema#
type: object
properties:
  stringRequired: {type: string}
  intRequired: {type: integer, minimum: -90, maximum: 90}
  numberRequired: {type: number, exclusiveMinimum: 0}
  stringOptional: {type: string}
  phoneOptional: {type: string, pattern: '^(\([0-9]{3}\))?[0-9]{3}-[0-9]{4}$'}
required: [stringRequired, intRequired, numberRequired]
`

// kalypsoValues are the values of TestValidateValues, as ConfigMap data (all strings).
var kalypsoValues = map[string]string{
	"stringRequired": "value1", "intRequired": "0", "numberRequired": "3.14", "phoneOptional": "(888)555-1212",
}

const (
	valuesFile  = "environments/dev/configs/values.yaml"
	schemasFile = "environments/dev/configs/schemas.yaml"
)

// configMapYAML renders a platform-config ConfigMap, keys sorted, values double-quoted.
func configMapYAML(name string, labels, data map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  labels:\n    platform-config: \"true\"\n", name)
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		fmt.Fprintf(&b, "    %s: %q\n", k, labels[k])
	}
	b.WriteString("data:\n")
	for _, k := range slices.Sorted(maps.Keys(data)) {
		fmt.Fprintf(&b, "  %s: %q\n", k, data[k])
	}
	return b.String()
}

// configSchemaYAML renders a ConfigSchema whose schema is text, as a block scalar.
func configSchemaYAML(name string, labels map[string]string, text string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ConfigSchema\nmetadata:\n  name: %s\n", name)
	if len(labels) > 0 {
		b.WriteString("  labels:\n")
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			fmt.Fprintf(&b, "    %s: %q\n", k, labels[k])
		}
	}
	b.WriteString("spec:\n  schema: |\n")
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// validateFiles loads the conflict control plane without its ConfigMaps, plus files.
func validateFiles(extra map[string]string) map[string]string {
	files := conflictFiles("layered")
	delete(files, conflictCMsFile)
	return withFiles(files, extra)
}

// validate loads files, composes large/observability-prometheus and validates it.
func validate(t *testing.T, files map[string]string) (*compose.Config, []controlplane.Diagnostic) {
	t.Helper()
	snap := loadDev(t, files)
	ct, dt := pair(t, snap, "large", "observability-prometheus")
	c := compose.New(snap)
	cfg := c.Compose(ct, dt)
	return cfg, c.Validate(cfg, ct, dt)
}

func TestValidate(t *testing.T) {
	t.Parallel()
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range kalypsoValues {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name   string
		values map[string]string
		schema string
		// want are substrings of the one expected message; none means valid.
		want []string
	}{
		{name: "kalypso TestValidateValues: strings coerced where the schema asks", values: kalypsoValues, schema: kalypsoSchema},
		{name: "yaml schema", values: kalypsoValues, schema: kalypsoSchemaYAML},
		{name: "numeric string against type string passes", values: with("stringRequired", "42"), schema: kalypsoSchema},
		{name: "negative integer", values: with("intRequired", "-90"), schema: kalypsoSchema},
		{name: "integer with spaces", values: with("intRequired", " 7 "), schema: kalypsoSchema},
		{
			name: "not an integer", values: with("intRequired", "abc"), schema: kalypsoSchema,
			want: []string{"intRequired", "got string, want integer", "rule properties/intRequired/type", "ConfigMap values", valuesFile + ":"},
		},
		{
			name: "decimal is not an integer", values: with("intRequired", "1.5"), schema: kalypsoSchema,
			want: []string{"intRequired", "want integer", "properties/intRequired/type"},
		},
		{
			name: "coerced integer out of range", values: with("intRequired", "91"), schema: kalypsoSchema,
			want: []string{"intRequired", "maximum", "properties/intRequired/maximum", "ConfigMap values"},
		},
		{
			name: "coerced number not above zero", values: with("numberRequired", "0"), schema: kalypsoSchema,
			want: []string{"numberRequired", "exclusiveMinimum"},
		},
		{
			name: "NaN is not a number", values: with("numberRequired", "NaN"), schema: kalypsoSchema,
			want: []string{"numberRequired", "want number"},
		},
		{
			name: "pattern", values: with("phoneOptional", "555-1212x"), schema: kalypsoSchema,
			want: []string{"phoneOptional", "pattern", "properties/phoneOptional/pattern", "ConfigMap values"},
		},
		{
			name: "missing required key", values: with("intRequired", ""), schema: kalypsoSchema,
			want: []string{"missing property 'intRequired'", "required"},
		},
		{
			name: "boolean coerced", values: map[string]string{"ENABLED": "true"},
			schema: `{"properties": {"ENABLED": {"type": "boolean"}}}`,
		},
		{
			name: "boolean not coerced from other text", values: map[string]string{"ENABLED": "yes"},
			schema: `{"properties": {"ENABLED": {"type": "boolean"}}}`,
			want:   []string{"ENABLED", "want boolean"},
		},
		{
			name: "structured values are coerced where the schema asks", values: map[string]string{"DB": "{port: '5432', host: db}"},
			schema: `{"properties": {"DB": {"properties": {"port": {"type": "integer"}, "host": {"type": "string"}}}}}`,
		},
		{
			name: "structured values are validated", values: map[string]string{"DB": "{port: x}"},
			schema: `{"properties": {"DB": {"properties": {"port": {"type": "integer"}}}}}`,
			want:   []string{"DB.port", "want integer", "ConfigMap values"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg, diags := validate(t, validateFiles(map[string]string{
				valuesFile:  configMapYAML("values", nil, tt.values),
				schemasFile: configSchemaYAML("kalypso", nil, tt.schema),
			}))
			if len(tt.want) == 0 {
				for _, d := range diags {
					t.Errorf("unexpected diagnostic: %v", d)
				}
				return
			}
			if len(diags) != 1 {
				t.Fatalf("got %d diagnostics, want 1: %v", len(diags), diags)
			}
			d := diags[0]
			for _, w := range tt.want {
				if !strings.Contains(d.Message, w) {
					t.Errorf("message %q does not contain %q", d.Message, w)
				}
			}
			if d.Severity != controlplane.SeverityError || d.Kind != "ConfigSchema" || d.Name != "kalypso" || d.File != schemasFile || d.Path != "spec.schema" {
				t.Errorf("diagnostic not located at the schema: %+v", d)
			}
			// Coercion works on a copy: the composed config keeps its strings.
			for k, v := range tt.values {
				if s, ok := cfg.Data[k].(string); ok && s != v {
					t.Errorf("config value %s changed to %q by validation", k, s)
				}
			}
		})
	}
}

// TestValidateNamesTheSettingConfigMap checks the line of the value in the message.
func TestValidateNamesTheSettingConfigMap(t *testing.T) {
	t.Parallel()
	cm := configMapYAML("values", nil, map[string]string{"intRequired": "abc", "stringRequired": "x", "numberRequired": "1"})
	_, diags := validate(t, validateFiles(map[string]string{
		valuesFile:  cm,
		schemasFile: configSchemaYAML("kalypso", nil, kalypsoSchema),
	}))
	want := fmt.Sprintf("value set by ConfigMap values at %s:%d", valuesFile, lineOf(t, cm, "intRequired:"))
	if len(diags) != 1 || !strings.Contains(diags[0].Message, want) {
		t.Fatalf("diagnostics = %v, want one containing %q", diags, want)
	}
	if got, want := diags[0].Line, lineOf(t, configSchemaYAML("kalypso", nil, kalypsoSchema), "schema:"); got != want {
		t.Errorf("diagnostic line = %d, want %d (the schema field)", got, want)
	}
}

// TestValidateSchemaProblems checks that a schema that cannot be used is reported (once
// per schema) and never read from outside.
func TestValidateSchemaProblems(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "string.json")
	if err := os.WriteFile(outside, []byte(`{"type": "string"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		schema    string
		want, not []string
	}{
		{name: "not yaml", schema: "type: [", want: []string{"invalid schema", "not JSON or YAML"}},
		{name: "not a schema", schema: `{"type": 5}`, want: []string{"invalid schema", "the schema"}, not: []string{"mem:"}},
		{name: "empty", schema: ``, want: []string{"invalid schema: the schema is empty: write a JSON Schema"}, not: []string{"mem:", "metaschema"}},
		{name: "blank", schema: `  `, want: []string{"the schema is empty"}},
		{name: "a list", schema: `[1, 2]`, want: []string{"a JSON Schema is an object (or true/false), not a list"}},
		{name: "a string", schema: `"object"`, want: []string{"not a string"}},
		{name: "unknown type", schema: `{"type": "strin"}`, want: []string{"invalid schema"}},
		{name: "bad pattern", schema: `{"properties": {"A": {"pattern": "("}}}`, want: []string{"invalid schema"}},
		{
			name:   "absolute file ref",
			schema: `{"properties": {"A": {"$ref": "file://` + filepath.ToSlash(outside) + `"}}}`,
			want:   []string{"invalid schema", "external references are not allowed"},
		},
		{
			name:   "relative file ref",
			schema: `{"properties": {"A": {"$ref": "string.json"}}}`,
			want:   []string{"invalid schema", "external references are not allowed"},
		},
		{
			name:   "url ref",
			schema: `{"properties": {"A": {"$ref": "https://example.invalid/schema.json"}}}`,
			want:   []string{"invalid schema", "external references are not allowed"},
		},
		{
			name:   "unknown meta-schema",
			schema: `{"$schema": "https://example.invalid/meta", "type": "object"}`,
			want:   []string{"invalid schema"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, diags := validate(t, validateFiles(map[string]string{
				valuesFile:  configMapYAML("values", nil, map[string]string{"A": "x"}),
				schemasFile: configSchemaYAML("broken", nil, tt.schema),
			}))
			if len(diags) != 1 {
				t.Fatalf("got %d diagnostics, want 1: %v", len(diags), diags)
			}
			for _, w := range tt.want {
				if !strings.Contains(diags[0].Message, w) {
					t.Errorf("message %q does not contain %q", diags[0].Message, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(diags[0].Message, w) {
					t.Errorf("message %q contains %q", diags[0].Message, w)
				}
			}
			if diags[0].Hint != "fix the schema" {
				t.Errorf("hint = %q, want fix the schema", diags[0].Hint)
			}
		})
	}
}

// TestValidateInternalRef checks that references inside the schema itself work.
func TestValidateInternalRef(t *testing.T) {
	t.Parallel()
	schema := `{"$defs": {"port": {"type": "integer", "maximum": 65535}}, "properties": {"PORT": {"$ref": "#/$defs/port"}}}`
	for _, tt := range []struct {
		value string
		valid bool
	}{{"8080", true}, {"70000", false}} {
		_, diags := validate(t, validateFiles(map[string]string{
			valuesFile:  configMapYAML("values", nil, map[string]string{"PORT": tt.value}),
			schemasFile: configSchemaYAML("ports", nil, schema),
		}))
		if got := len(diags) == 0; got != tt.valid {
			t.Errorf("PORT=%s: valid = %v, want %v (%v)", tt.value, got, tt.valid, diags)
		}
	}
}

// TestValidateSchemaSelection checks which schemas apply: ConfigSchemas by their labels,
// and the schemas of the deployment target and its workload.
func TestValidateSchemaSelection(t *testing.T) {
	t.Parallel()
	requires := func(key string) string { return fmt.Sprintf(`{"required": [%q]}`, key) }
	workload := `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata:
  name: observability
  labels: {stack: observability, workspace: platform-team}
spec:
  configSchemas:
    - '{"required": ["FROM_WORKLOAD"]}'
  deploymentTargets:
    - name: prometheus
      environment: dev
      manifests: {repo: "https://example.com/r", branch: dev, path: ./prometheus}
      configSchemas:
        - |
          required: [FROM_TARGET]
`
	schemas := strings.Join([]string{
		configSchemaYAML("for-all", nil, requires("FROM_ALL")),
		configSchemaYAML("for-large", map[string]string{"cluster-type": "large"}, requires("FROM_LARGE")),
		configSchemaYAML("for-west", map[string]string{"region": "west-us"}, requires("FROM_WEST")),
		configSchemaYAML("for-small", map[string]string{"cluster-type": "small"}, requires("FROM_SMALL")),
		configSchemaYAML("for-east", map[string]string{"region": "east-us"}, requires("FROM_EAST")),
		configSchemaYAML("for-observability", map[string]string{"workload": "observability"}, requires("FROM_OBSERVABILITY")),
	}, "---\n")
	_, diags := validate(t, validateFiles(map[string]string{
		valuesFile:                     configMapYAML("values", nil, map[string]string{"OTHER": "x"}),
		schemasFile:                    schemas,
		"workloads/observability.yaml": workload,
	}))
	type where struct{ Kind, Name, Path, Missing string }
	var got []where
	for _, d := range diags {
		_, missing, _ := strings.Cut(d.Message, "missing property '")
		missing, _, _ = strings.Cut(missing, "'")
		got = append(got, where{d.Kind, d.Name, d.Path, missing})
	}
	want := []where{
		{"ConfigSchema", "for-all", "spec.schema", "FROM_ALL"},
		{"ConfigSchema", "for-large", "spec.schema", "FROM_LARGE"},
		{"ConfigSchema", "for-observability", "spec.schema", "FROM_OBSERVABILITY"},
		{"ConfigSchema", "for-west", "spec.schema", "FROM_WEST"},
		{"Workload", "observability", "spec.deploymentTargets[0].configSchemas[0]", "FROM_TARGET"},
		{"Workload", "observability", "spec.configSchemas[0]", "FROM_WORKLOAD"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics mismatch (-want +got):\n%s\n%v", diff, diags)
	}
	for _, d := range diags {
		if d.Kind == "Workload" && (d.File != "workloads/observability.yaml" || d.Line == 0) {
			t.Errorf("workload schema diagnostic not located in the workload file: %+v", d)
		}
	}
}

// TestValidateCachedResultsKeepTheirSources validates two configs with equal data but
// different sources: each message must name its own ConfigMap.
func TestValidateCachedResultsKeepTheirSources(t *testing.T) {
	t.Parallel()
	files := validateFiles(map[string]string{
		"environments/dev/small.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata:
  name: small
  labels: {region: west-us, size: small}
spec: {reconciler: arc-flux, namespaceService: default, configType: configmap}
`,
		valuesFile: configMapYAML("large-values", map[string]string{"cluster-type": "large"}, map[string]string{"PORT": "abc"}) +
			"---\n" + configMapYAML("small-values", map[string]string{"cluster-type": "small"}, map[string]string{"PORT": "abc"}),
		schemasFile: configSchemaYAML("ports", nil, `{"properties": {"PORT": {"type": "integer"}}}`),
	})
	snap := loadDev(t, files)
	c := compose.New(snap)
	for _, ctName := range []string{"large", "small"} {
		ct, dt := pair(t, snap, ctName, "observability-prometheus")
		diags := c.Validate(c.Compose(ct, dt), ct, dt)
		want := "ConfigMap " + ctName + "-values"
		if len(diags) != 1 || !strings.Contains(diags[0].Message, want) {
			t.Errorf("%s: diagnostics = %v, want one naming %q", ctName, diags, want)
		}
	}
}

// TestValidateDeploymentTargetDocument checks the schemas of a DeploymentTarget written
// directly in the control plane: its diagnostics name that document.
func TestValidateDeploymentTargetDocument(t *testing.T) {
	t.Parallel()
	files := validateFiles(map[string]string{
		valuesFile: configMapYAML("values", nil, map[string]string{"OTHER": "x"}),
		"environments/dev/targets/direct.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: DeploymentTarget
metadata:
  name: direct
  labels: {workload: observability, workspace: platform-team}
spec:
  environment: dev
  manifests: {repo: "https://example.com/r", branch: dev, path: ./direct}
  configSchemas:
    - '{"required": ["FROM_DIRECT"]}'
`,
	})
	snap := loadDev(t, files)
	ct, dt := pair(t, snap, "large", "direct")
	c := compose.New(snap)
	diags := c.Validate(c.Compose(ct, dt), ct, dt)
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics, want 1: %v", len(diags), diags)
	}
	d := diags[0]
	if d.Kind != "DeploymentTarget" || d.Name != "direct" || d.File != "environments/dev/targets/direct.yaml" ||
		d.Path != "spec.configSchemas[0]" || !strings.Contains(d.Message, "FROM_DIRECT") {
		t.Errorf("diagnostic = %+v, want DeploymentTarget/direct spec.configSchemas[0] missing FROM_DIRECT", d)
	}
}

// TestComposeAndValidateConcurrently shares one Composer between goroutines (as the
// renderer does); run with -race.
func TestComposeAndValidateConcurrently(t *testing.T) {
	t.Parallel()
	snap := loadDev(t, withFiles(kalypsoDev, map[string]string{
		schemasFile: configSchemaYAML("names", nil, `{"properties": {"CLUSTER_NAME": {"enum": ["Large", "Small"]}}}`),
	}))
	c := compose.New(snap)
	dt := snap.DeploymentTargets[0]
	want := map[string]int{"large": 0, "small": 0, "drone": 1, "command-center": 1} // diagnostics per cluster type
	results := make(chan map[string]int, 8)
	for range cap(results) {
		go func() {
			got := map[string]int{}
			for _, ct := range snap.ClusterTypes {
				got[ct.Metadata.Name] = len(c.Validate(c.Compose(ct, dt), ct, dt))
			}
			results <- got
		}()
	}
	for range cap(results) {
		if diff := cmp.Diff(want, <-results); diff != "" {
			t.Errorf("diagnostics per cluster type mismatch (-want +got):\n%s", diff)
		}
	}
}
