package render

// TextTemplateOnly makes e run every manifest with text/template, not the fast executor.
func TextTemplateOnly(e *Engine) { e.noFast = true }

// FastStops is how many manifests e's fast executor has given back to text/template.
func FastStops(e *Engine) int64 { return e.fastStops.Load() }

// HostUser is the OS user the built-in Ansible templates derive for a deployment target.
var HostUser = hostUser
