package yamlnode

import (
	"bytes"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Encoder writes node trees as YAML documents, indented by two spaces, holding the values
// the trees hold: yaml.v3 writes an empty null inside a flow collection ({a}) or as a key
// as a quoted empty string, so Encode spells those null first (in the tree it is given).
type Encoder struct {
	enc *yaml.Encoder
}

// NewEncoder returns an Encoder writing to w; Close ends its last document.
func NewEncoder(w io.Writer) *Encoder {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	return &Encoder{enc: enc}
}

// Encode writes n as the next document.
func (e *Encoder) Encode(n *yaml.Node) error {
	spellNulls(n, false)
	return e.enc.Encode(n)
}

// Close flushes what is left to write.
func (e *Encoder) Close() error { return e.enc.Close() }

// Encode writes one node tree as a YAML document (see Encoder).
func Encode(n *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	e := NewEncoder(&b)
	if err := e.Encode(n); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// spellNulls writes out the empty nulls below n that the encoder would quote: those inside
// flow collections ({a} is {a: null}) and empty keys (: 1 is null: 1).
func spellNulls(n *yaml.Node, inFlow bool) {
	inFlow = inFlow || n.Style&yaml.FlowStyle != 0
	for i, c := range n.Content {
		key := n.Kind == yaml.MappingNode && i%2 == 0
		if c.Kind == yaml.ScalarNode && c.Tag == nullTag && c.Value == "" && (inFlow || key) {
			c.Value = "null"
		}
		spellNulls(c, inFlow)
	}
}
