package v1alpha1

// Template is a Go text/template set that renders one file of every assignment on the
// cluster types that name it.
type Template struct {
	TypeMeta `yaml:",inline" json:",inline"`
	Metadata ObjectMeta   `yaml:"metadata" json:"metadata"`
	Spec     TemplateSpec `yaml:"spec" json:"spec"`
	Status   any          `yaml:"status,omitempty" json:"-"`
}

// TemplateSpec is the template's role and text.
type TemplateSpec struct {
	// Type is reconciler, namespace or config.
	Type string `yaml:"type" json:"type"`
	// ContentType "sh" makes a config template render platform-config.sh; anything else
	// renders platform-config.yaml.
	ContentType string `yaml:"contentType,omitempty" json:"contentType,omitempty"`
	// Manifests are Go text/templates; their outputs are joined with `---` into one file.
	Manifests []string `yaml:"manifests" json:"manifests"`
}

// Template types.
const (
	TemplateReconciler = "reconciler"
	TemplateNamespace  = "namespace"
	TemplateConfig     = "config"
)

// ContentTypeShell is the contentType that renders a shell file.
const ContentTypeShell = "sh"
