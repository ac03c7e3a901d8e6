package authoring

import (
	"bytes"
	"errors"
	"io"
	"slices"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Scope is what a change really touches, read from the documents its files add, change or
// remove (not from what its operations say): the workspaces whose registrations, workloads
// and deployment targets it changes, and whether it changes anything else (the platform's
// objects).
type Scope struct {
	Workspaces []string `json:"workspaces"`
	Platform   bool     `json:"platform"`
}

// scopeDoc is what a document says about whom it belongs to.
type scopeDoc struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Workspace string `yaml:"workspace"`
	} `yaml:"spec"`
}

// owner is the workspace a document belongs to ("": the platform). Registrations name their
// workspace; workloads and deployment targets carry it as the workspace label; every other
// kind is the platform's.
func (d scopeDoc) owner() string {
	switch d.Kind {
	case v1alpha1.KindWorkloadRegistration:
		return d.Spec.Workspace
	case v1alpha1.KindWorkload, v1alpha1.KindDeploymentTarget:
		return d.Metadata.Labels[v1alpha1.LabelWorkspace]
	}
	return ""
}

// addFile adds what changing a file from old to now touches: every document that is not
// in both, byte for byte, belongs to its owner before and after. A file that does not read
// as YAML documents is the platform's.
func (s *Scope) addFile(old, now []byte) {
	before, errB := splitDocs(old)
	after, errA := splitDocs(now)
	if errB != nil || errA != nil {
		s.Platform = true
		return
	}
	for key, raw := range before {
		if other, ok := after[key]; !ok || !bytes.Equal(raw.text, other.text) {
			s.add(raw.doc.owner())
		}
	}
	for key, raw := range after {
		if other, ok := before[key]; !ok || !bytes.Equal(raw.text, other.text) {
			s.add(raw.doc.owner())
		}
	}
}

func (s *Scope) add(workspace string) {
	switch {
	case workspace == "":
		s.Platform = true
	case !slices.Contains(s.Workspaces, workspace):
		s.Workspaces = append(s.Workspaces, workspace)
		slices.Sort(s.Workspaces)
	}
}

// rawDoc is a document and its canonical text (what it says, without comments or layout).
type rawDoc struct {
	doc  scopeDoc
	text []byte
}

// splitDocs reads a YAML stream into its documents by kind and name; documents without a
// kind, or of a kind and name seen before, are told apart by what they say.
func splitDocs(data []byte) (map[string]rawDoc, error) {
	out := map[string]rawDoc{}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		var d scopeDoc
		if err := n.Decode(&d); err != nil {
			return nil, err
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return nil, err
		}
		text, err := yaml.Marshal(v)
		if err != nil {
			return nil, err
		}
		key := d.Kind + "/" + d.Metadata.Name
		if _, dup := out[key]; dup || d.Kind == "" {
			key = "text:" + string(text) // told apart by what they say
		}
		out[key] = rawDoc{doc: d, text: text}
	}
}
