package yamlnode

import (
	"testing"

	yaml "go.yaml.in/yaml/v3"
	k8syaml "sigs.k8s.io/yaml"
)

// TestQuoteStringForYAML11: a string that YAML 1.1 reads as a boolean when plain is written
// quoted, so that a YAML 1.1 reader (sigs.k8s.io/yaml, as Helm and kubectl read) reads the
// string; other strings stay plain, and a boolean stays a boolean.
func TestQuoteStringForYAML11(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		node *yaml.Node
		want string
		read any
	}{
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "NO"}, "v: \"NO\"\n", "NO"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "y"}, "v: \"y\"\n", "y"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "Off"}, "v: \"Off\"\n", "Off"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "TRUE"}, "v: \"TRUE\"\n", "TRUE"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "on", Style: yaml.SingleQuotedStyle}, "v: 'on'\n", "on"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "NOK"}, "v: NOK\n", "NOK"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: strTag, Value: "Norway"}, "v: Norway\n", "Norway"},
		{&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}, "v: true\n", true},
	} {
		QuoteString(tc.node)
		doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: strTag, Value: "v"}, tc.node}}
		got, err := Encode(doc)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s %q: written %q, %v; want %q", tc.node.Tag, tc.node.Value, got, err, tc.want)
			continue
		}
		var m map[string]any
		if err := k8syaml.Unmarshal(got, &m); err != nil || m["v"] != tc.read {
			t.Errorf("%q read by YAML 1.1 as %#v, %v; want %#v", got, m["v"], err, tc.read)
		}
	}
}

// TestYAML11Bools: IsYAML11Bool knows exactly the words YAML 1.1 reads as booleans.
func TestYAML11Bools(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE",
		"false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "yES", "oN", "nO", "Norway", "1", "t", "f", ""} {
		var m map[string]any
		if err := k8syaml.Unmarshal([]byte("v: "+s+"\n"), &m); err != nil {
			t.Fatal(err)
		}
		_, isBool := m["v"].(bool)
		if IsYAML11Bool(s) != isBool {
			t.Errorf("%q: IsYAML11Bool %t, but YAML 1.1 reads it as %#v", s, IsYAML11Bool(s), m["v"])
		}
	}
}
