// Package crdtest compiles the openAPIV3Schema of a CustomResourceDefinition as a JSON
// Schema as strict as the API server with strict field validation, for tests that check
// rendered objects against the real CRDs of Flux and Argo CD (../shared/schemas, see
// Schemas) or against another CRD file (see Compile).
package crdtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// Files are the CRD files of ../shared/schemas and their version, by group/version/kind.
var Files = map[string]struct{ File, Version string }{
	"source.toolkit.fluxcd.io/v1/GitRepository":    {"flux-source.toolkit.fluxcd.io_gitrepositories.yaml", "v1"},
	"kustomize.toolkit.fluxcd.io/v1/Kustomization": {"flux-kustomize.toolkit.fluxcd.io_kustomizations.yaml", "v1"},
	"argoproj.io/v1alpha1/Application":             {"argocd-application-crd.yaml", "v1alpha1"},
}

// Schemas compiles the schemas of Files, skipping the test when ../shared/schemas is absent
// (CI always has it).
func Schemas(tb testing.TB) map[string]*jsonschema.Schema {
	tb.Helper()
	dir := gittest.SharedDir(tb, "schemas")
	out := map[string]*jsonschema.Schema{}
	for gvk, f := range Files {
		out[gvk] = Compile(tb, filepath.Join(dir, f.File), f.Version, gvk)
	}
	return out
}

// Compile compiles the openAPIV3Schema of one version of the CRD in file.
func Compile(tb testing.TB, file, version, gvk string) *jsonschema.Schema {
	tb.Helper()
	data, err := os.ReadFile(file) //nolint:gosec // a test's schema file
	if err != nil {
		tb.Fatal(err)
	}
	var doc struct {
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
	if err := yaml.Unmarshal(data, &doc); err != nil {
		tb.Fatalf("%s: %v", file, err)
	}
	if got := doc.Spec.Group + "/" + version + "/" + doc.Spec.Names.Kind; got != gvk {
		tb.Fatalf("%s defines %s, want %s", file, got, gvk)
	}
	for _, v := range doc.Spec.Versions {
		if v.Name != version {
			continue
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft4) // OpenAPI 3.0 schema objects are draft 4 with extensions
		url := "mem:///" + filepath.Base(file)
		if err := c.AddResource(url, FromOpenAPI(v.Schema.OpenAPIV3Schema)); err != nil {
			tb.Fatalf("%s: %v", file, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			tb.Fatalf("%s: compile %s: %v", file, version, err)
		}
		return s
	}
	tb.Fatalf("%s has no version %s", file, version)
	return nil
}

// FromOpenAPI turns a Kubernetes structural schema into a JSON Schema: nullable allows
// null, x-kubernetes-int-or-string allows integers and strings, an object with properties
// refuses unknown fields unless it preserves them or has additionalProperties; other
// x-kubernetes-* keys are dropped (CEL rules are not evaluated).
func FromOpenAPI(s map[string]any) map[string]any {
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
				converted[name] = FromOpenAPI(ps)
			}
		}
		out["properties"] = converted
		if s["additionalProperties"] == nil && s["x-kubernetes-preserve-unknown-fields"] != true {
			out["additionalProperties"] = false
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if sub, ok := s[k].(map[string]any); ok {
			out[k] = FromOpenAPI(sub)
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		if list, ok := s[k].([]any); ok {
			converted := make([]any, len(list))
			for i, e := range list {
				if es, ok := e.(map[string]any); ok {
					converted[i] = FromOpenAPI(es)
				} else {
					converted[i] = e
				}
			}
			out[k] = converted
		}
	}
	return out
}
