package yamlnode

import (
	"bytes"
	"io"

	yaml "go.yaml.in/yaml/v3"
)

// Encoder writes node trees as YAML documents, indented by two spaces, holding the values
// and the documents the trees hold. yaml.v3 writes an empty null inside a flow collection
// ({a}) or as a key as a quoted empty string, so Encode spells those null first (in the
// tree it is given); and it writes an empty first document without its "---", which would
// make the next document the first, so Close writes that "---".
type Encoder struct {
	w          io.Writer
	buf        bytes.Buffer
	enc        *yaml.Encoder
	docs       int
	firstEmpty bool
}

// NewEncoder returns an Encoder writing to w when it is closed.
func NewEncoder(w io.Writer) *Encoder {
	e := &Encoder{w: w}
	e.enc = yaml.NewEncoder(&e.buf)
	e.enc.SetIndent(2)
	return e
}

// Encode adds n as the next document.
func (e *Encoder) Encode(n *yaml.Node) error {
	spellNulls(n, false)
	if e.docs == 0 {
		e.firstEmpty = emptyDocument(n)
	}
	e.docs++
	return e.enc.Encode(n)
}

// Close writes the documents.
func (e *Encoder) Close() error {
	if err := e.enc.Close(); err != nil {
		return err
	}
	out := e.buf.Bytes()
	if e.docs > 1 && e.firstEmpty && !bytes.HasPrefix(out, []byte("---")) {
		if !bytes.HasPrefix(out, []byte("\n")) {
			out = append([]byte("\n"), out...)
		}
		out = append([]byte("---"), out...)
	}
	_, err := e.w.Write(out)
	return err
}

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

// emptyDocument reports whether doc holds nothing but comments: an empty null scalar.
func emptyDocument(doc *yaml.Node) bool {
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return false
	}
	n := doc.Content[0]
	return n.Kind == yaml.ScalarNode && n.Tag == nullTag && n.Value == ""
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
