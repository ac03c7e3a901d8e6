package deploy_test

import (
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"
)

// serviceMonitorSchema compiles the v1 schema of the ServiceMonitor CRD in
// testdata/crd (see its README) as a JSON Schema.
func serviceMonitorSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var crd struct {
		Spec struct {
			Group    string                `json:"group"`
			Names    struct{ Kind string } `json:"names"`
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(readRepoFile(t, "deploy", "testdata", "crd", "monitoring.coreos.com_servicemonitors.yaml"), &crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Group != "monitoring.coreos.com" || crd.Spec.Names.Kind != "ServiceMonitor" {
		t.Fatalf("testdata/crd holds %s %s, not the ServiceMonitor CRD", crd.Spec.Group, crd.Spec.Names.Kind)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != "v1" {
			continue
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft4) // OpenAPI 3.0 schema objects are draft 4 with extensions
		const url = "mem:///servicemonitor.json"
		if err := c.AddResource(url, fromOpenAPI(v.Schema.OpenAPIV3Schema)); err != nil {
			t.Fatal(err)
		}
		s, err := c.Compile(url)
		if err != nil {
			t.Fatalf("compile the ServiceMonitor schema: %v", err)
		}
		return s
	}
	t.Fatal("the ServiceMonitor CRD has no v1")
	return nil
}

// fromOpenAPI turns a Kubernetes structural schema into a JSON Schema as strict as the API
// server with strict field validation: nullable allows null, x-kubernetes-int-or-string
// allows integers and strings, an object with properties refuses unknown fields unless it
// preserves them or has additionalProperties; other x-kubernetes-* keys are dropped (CEL
// rules are not evaluated).
func fromOpenAPI(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		if !strings.HasPrefix(k, "x-kubernetes-") && k != "nullable" {
			out[k] = v
		}
	}
	if typ, ok := s["type"].(string); ok && s["nullable"] == true {
		out["type"] = []any{typ, "null"}
	}
	if s["x-kubernetes-int-or-string"] == true && s["type"] == nil && s["anyOf"] == nil {
		out["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		converted := make(map[string]any, len(props))
		for name, p := range props {
			if ps, ok := p.(map[string]any); ok {
				converted[name] = fromOpenAPI(ps)
			}
		}
		out["properties"] = converted
		if s["additionalProperties"] == nil && s["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			out[k] = fromOpenAPI(sub)
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			converted := make([]any, len(list))
			for i, e := range list {
				if es, ok := e.(map[string]any); ok {
					converted[i] = fromOpenAPI(es)
				} else {
					converted[i] = e
				}
			}
			out[k] = converted
		}
	}
	return out
}

// TestServiceMonitorSchemaIsStrict: the schema the chart's ServiceMonitor is checked
// against refuses what the API server would.
func TestServiceMonitorSchemaIsStrict(t *testing.T) {
	s := serviceMonitorSchema(t)
	valid := func() map[string]any {
		return map[string]any{
			"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
			"metadata": map[string]any{"name": "x"},
			"spec": map[string]any{
				"selector":  map[string]any{"matchLabels": map[string]any{"a": "b"}},
				"endpoints": []any{map[string]any{"port": "http", "path": "/metrics", "interval": "30s"}},
			},
		}
	}
	if err := s.Validate(valid()); err != nil {
		t.Fatalf("a valid ServiceMonitor is refused: %v", err)
	}
	unknown := valid()
	unknown["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)["metricsPath"] = "/metrics"
	badInterval := valid()
	badInterval["spec"].(map[string]any)["endpoints"].([]any)[0].(map[string]any)["interval"] = "30 seconds"
	for name, obj := range map[string]map[string]any{"an unknown field": unknown, "a malformed interval": badInterval} {
		if err := s.Validate(obj); err == nil {
			t.Errorf("a ServiceMonitor with %s validates", name)
		}
	}
}
