package yamlnode

import yaml "go.yaml.in/yaml/v3"

// yaml11Bools are the words YAML 1.1 reads as booleans when they are plain. YAML 1.2, and
// so yaml.v3, reads most of them as strings, but Helm (sigs.k8s.io/yaml, yaml.v2), kubectl
// and many other tools read YAML 1.1.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// IsYAML11Bool reports whether s, written plain, is a boolean to a YAML 1.1 reader (yes,
// no, on, off, y, n, true, false and their capitalised forms).
func IsYAML11Bool(s string) bool { return yaml11Bools[s] }

// QuoteString makes n, when it is a string scalar that a YAML 1.1 reader would read as a
// boolean if written plain (country: NO), written double-quoted, so that every reader
// reads a string. yaml.v3 quotes a string only where YAML 1.2 reads another type. Any other
// node, a string already quoted or in a block, and a non-string scalar are left as they are.
func QuoteString(n *yaml.Node) {
	const written = yaml.DoubleQuotedStyle | yaml.SingleQuotedStyle | yaml.LiteralStyle | yaml.FoldedStyle
	if n.Kind == yaml.ScalarNode && n.ShortTag() == strTag && n.Style&written == 0 && IsYAML11Bool(n.Value) {
		n.Style |= yaml.DoubleQuotedStyle
	}
}
