package v1alpha1

// ConfigMap is a Kubernetes ConfigMap. Those labelled platform-config: "true" are sources
// of platform configuration; those named azure-app-config* carry Azure App Configuration
// keys (Kalypso compatibility).
type ConfigMap struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta `yaml:"metadata" json:"metadata"`
	// Data values are strings; a value that parses as a YAML list or map is structured.
	Data map[string]string `yaml:"data,omitempty" json:"data,omitempty"`
	// BinaryData is accepted and ignored.
	BinaryData map[string]string `yaml:"binaryData,omitempty" json:"-"`
	// Immutable is accepted and ignored.
	Immutable *bool `yaml:"immutable,omitempty" json:"-"`
}
