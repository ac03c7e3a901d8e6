package v1alpha1

// ConfigSchema is a JSON Schema the composed configuration must satisfy on every
// (cluster type, deployment target) its labels match.
type ConfigSchema struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta       `yaml:"metadata" json:"metadata"`
	Spec     ConfigSchemaSpec `yaml:"spec" json:"spec"`
	Status   any              `yaml:"status,omitempty" json:"-"`
}

// ConfigSchemaSpec holds the schema text.
type ConfigSchemaSpec struct {
	// Schema is a JSON Schema as JSON or YAML text. Without `$schema`, draft 2020-12.
	Schema string `yaml:"schema" json:"schema"`
}
