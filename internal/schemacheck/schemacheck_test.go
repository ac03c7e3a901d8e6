package schemacheck_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fleetform/fleetform/internal/schemacheck"
)

func compile(t *testing.T, text string) (*jsonschema.Schema, error) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return schemacheck.Compile("mem:///test.json", doc)
}

func TestCompileRefusesExternalReferences(t *testing.T) {
	_, err := compile(t, `{"$ref": "https://example.com/s.json"}`)
	if err == nil || !strings.Contains(err.Error(), "external references are not allowed") {
		t.Fatalf("err = %v, want external references refused", err)
	}
	if strings.Contains(err.Error(), "mem:///test.json") {
		t.Errorf("the error names the internal URL: %v", err)
	}
}

func TestLeavesMessageRule(t *testing.T) {
	s, err := compile(t, `{"$defs": {"port": {"type": "integer", "maximum": 10}},
		"properties": {"port": {"$ref": "#/$defs/port"}, "name": {"type": "string"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	var ve *jsonschema.ValidationError
	if !errors.As(s.Validate(map[string]any{"port": 11, "name": 1}), &ve) {
		t.Fatal("want a validation error")
	}
	got := map[string]string{}
	for _, e := range schemacheck.Leaves(ve) {
		got[schemacheck.Rule(e)] = schemacheck.Message(e)
	}
	if len(got) != 2 || got["$defs/port/maximum"] == "" || got["properties/name/type"] == "" {
		t.Errorf("rules and messages = %v, want $defs/port/maximum and properties/name/type", got)
	}
}
