package deploy_test

import (
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetform/fleetform/internal/testutil/crdtest"
)

// serviceMonitorSchema compiles the v1 schema of the ServiceMonitor CRD in
// testdata/crd (see its README) as a JSON Schema.
func serviceMonitorSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	file := repoPath(t, "deploy", "testdata", "crd", "monitoring.coreos.com_servicemonitors.yaml")
	return crdtest.Compile(t, file, "v1", "monitoring.coreos.com/v1/ServiceMonitor")
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
