package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"strings"
	"text/template"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Data is what a template sees: exactly Kalypso's fields.
type Data struct {
	DeploymentTargetName string
	Namespace            string
	Environment          string
	Workspace            string
	Workload             string
	Labels               map[string]string
	Manifests            map[string]string
	ClusterType          string
	ConfigData           map[string]any
	// labels are fleetformLabels of this data, made on their first use: every manifest of
	// the built-in templates prints them.
	labels string
}

// File names inside a deployment target's folder.
const (
	ReconcilerFile = "reconciler.yaml"
	NamespaceFile  = "namespace.yaml"
	ConfigYAMLFile = "platform-config.yaml"
	ConfigShFile   = "platform-config.sh"
	// ReadmeFile is written in every cluster type's folder.
	ReadmeFile = "README.md"
	// ReadmeText is its content (Kalypso's, byte for byte).
	ReadmeText = "This folder contains deployment targets scheduled on the cluster type"
	// PromotedCommitFile records the promoted control-plane commit.
	PromotedCommitFile = ".github/tracking/Promoted_Commit_Id"
)

// Files are the rendered files of one assignment.
type Files struct {
	Reconciler []byte
	Namespace  []byte
	// Config is nil when the config template rendered nothing.
	Config []byte
	// ConfigName is platform-config.yaml or platform-config.sh.
	ConfigName string
	// KeepConfig says the platform config was not rendered (the assignment waits for
	// platform configuration): the writer keeps the one the folder has.
	KeepConfig bool
}

// Each calls fn for every file, in name order, with its name inside the target's folder.
func (f *Files) Each(fn func(name string, content []byte)) {
	if f.Config != nil && f.ConfigName == ConfigShFile {
		fn(ConfigShFile, f.Config)
	}
	fn(NamespaceFile, f.Namespace)
	if f.Config != nil && f.ConfigName == ConfigYAMLFile {
		fn(ConfigYAMLFile, f.Config)
	}
	fn(ReconcilerFile, f.Reconciler)
}

// TemplateError is a template that failed for one assignment.
type TemplateError struct {
	Template *Template
	Err      error
}

func (e *TemplateError) Error() string { return fmt.Sprintf("template %s: %v", e.Template.Name, e.Err) }
func (e *TemplateError) Unwrap() error { return e.Err }

// RenderAssignment renders the three files of one assignment with the cluster type's
// templates (already resolved by the caller).
func (e *Engine) RenderAssignment(env string, a *schedule.Assignment, cfg *compose.Config, ts *ClusterTypeTemplates) (*Files, error) {
	data := &Data{
		DeploymentTargetName: a.DeploymentTarget, Namespace: a.Namespace, Environment: env,
		Workspace: a.Target.Labels[v1alpha1.LabelWorkspace], Workload: a.Target.Labels[v1alpha1.LabelWorkload],
		Labels: a.Target.Labels, Manifests: a.Manifests, ClusterType: a.ClusterType, ConfigData: cfg.Data,
	}
	if data.Manifests == nil {
		data.Manifests = a.Target.Manifests // an assignment not made by schedule.Schedule
	}
	if data.Manifests == nil {
		data.Manifests = map[string]string{}
	}
	c := e.acquire()
	defer e.release(c)
	c.st.start(e.Limits.withDefaults())
	var f Files
	var err error
	if f.Reconciler, err = c.execute(ts.Reconciler, data); err != nil {
		return nil, err
	}
	if f.Namespace, err = c.execute(ts.Namespace, data); err != nil {
		return nil, err
	}
	if f.Config, err = c.execute(ts.Config, data); err != nil {
		return nil, err
	}
	if len(f.Config) == 0 {
		f.Config = nil
	}
	f.ConfigName = ConfigYAMLFile
	if ts.Config.ContentType == v1alpha1.ContentTypeShell {
		f.ConfigName = ConfigShFile
	}
	return &f, nil
}

// execute runs every manifest of t and joins the non-empty outputs with "---". Manifests
// write straight into the file's buffer, sized from the template's previous outputs.
func (c *execContext) execute(t *Template, data *Data) ([]byte, error) {
	if t.mutates {
		data = data.deepCopy()
	}
	out := bytes.NewBuffer(make([]byte, 0, t.sizeHint.Load()+64))
	b := c.bind(t)
	for i, m := range b.manifests {
		start := out.Len()
		if start > 0 {
			out.WriteString("---\n")
		}
		body := out.Len()
		if !c.runFast(b.fast[i], out, data) {
			c.st.startManifest(out, data)
			if err := m.Execute(c.st, data); err != nil {
				return nil, &TemplateError{Template: t, Err: executionError(m, data, err)}
			}
		}
		item := out.Bytes()[body:]
		switch {
		case len(bytes.TrimSpace(item)) == 0:
			out.Truncate(start) // empty or whitespace-only output is dropped
		case item[len(item)-1] != '\n':
			out.WriteByte('\n')
		}
	}
	if n := int64(out.Len()); n > t.sizeHint.Load() {
		t.sizeHint.Store(n)
	}
	return out.Bytes(), nil
}

// runFast runs a manifest with the fast executor (p; nil when it cannot), writing into out
// after what is there. When it stops, what it wrote and counted is undone and it reports
// false: the manifest is then run with text/template.
func (c *execContext) runFast(p *fastProgram, out *bytes.Buffer, data *Data) bool {
	if p == nil {
		return false
	}
	body, allocLeft, ticks := out.Len(), c.st.allocLeft, c.st.ticks
	c.st.startManifest(out, data)
	if p.run(c.st, data) {
		return true
	}
	out.Truncate(body)
	c.st.allocLeft, c.st.ticks = allocLeft, ticks
	c.stops.Add(1)
	return false
}

func (d *Data) deepCopy() *Data {
	c := *d
	c.Labels = maps.Clone(d.Labels)
	c.Manifests = maps.Clone(d.Manifests)
	c.ConfigData, _ = deepCopyValue(d.ConfigData).(map[string]any)
	return &c
}

func deepCopyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopyValue(e)
		}
		return out
	default:
		return v
	}
}

// executionError is the error of a manifest's execution, as users read it: always with
// the manifest's name and, where known, the line, column and action.
func executionError(m *template.Template, data *Data, err error) error {
	var nv *noValueError
	if errors.As(err, &nv) {
		if nv.reason == "" && nv.site.chain != nil {
			nv.reason = diagnose(data, nv.site.chain)
		}
		return nv
	}
	var le *LimitError
	if errors.As(err, &le) {
		if le.Where != "" {
			return le // a marker's or a print check's, located by the engine
		}
		var ee template.ExecError
		if !errors.As(err, &ee) {
			return fmt.Errorf("template: %s: %w", m.Name(), le) // the output limit, from the writer
		}
	}
	return err // located by text/template (the limits of functions)
}

var errTooLarge = errors.New("output too large")

// limitedWriter writes at most left bytes; over reports that a write went past them.
type limitedWriter struct {
	w    io.Writer
	left int
	over bool
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if len(p) > l.left {
		l.over = true
		return 0, errTooLarge
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// missingTemplateField starts the problem of a cluster type that names no template.
const missingTemplateField = "missing"

// ClusterTypeTemplates are the three templates a cluster type renders with.
type ClusterTypeTemplates struct {
	Reconciler, Namespace, Config *Template
}

// TemplatesFor resolves a cluster type's templates; it fails when one is missing.
func (e *Engine) TemplatesFor(spec v1alpha1.ClusterTypeSpec) (*ClusterTypeTemplates, []string) {
	var ts ClusterTypeTemplates
	var problems []string
	for _, ref := range []struct {
		field, name, want, example string
		dst                        **Template
	}{
		{"spec.reconciler", spec.Reconciler, v1alpha1.TemplateReconciler, "builtin/flux", &ts.Reconciler},
		{"spec.namespaceService", spec.NamespaceService, v1alpha1.TemplateNamespace, "builtin/namespace", &ts.Namespace},
		{"spec.configType", spec.ConfigType, v1alpha1.TemplateConfig, "builtin/configmap", &ts.Config},
	} {
		t, ok := e.templates[ref.name]
		if ref.name == "" {
			problems = append(problems, fmt.Sprintf("%s: %s: it names the %s Template every assignment on this cluster type "+
				"renders with (such as %s)", ref.field, missingTemplateField, ref.want, ref.example))
			continue
		}
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: template %q not found", ref.field, ref.name))
			continue
		}
		*ref.dst = t
	}
	return &ts, problems
}

// TypeMismatches lists the templates used in a role other than their declared type.
func (ts *ClusterTypeTemplates) TypeMismatches() []string {
	var out []string
	for _, x := range []struct {
		t           *Template
		field, want string
	}{{ts.Reconciler, "spec.reconciler", v1alpha1.TemplateReconciler}, {ts.Namespace, "spec.namespaceService", v1alpha1.TemplateNamespace}, {ts.Config, "spec.configType", v1alpha1.TemplateConfig}} {
		if x.t != nil && x.t.Type != x.want {
			out = append(out, fmt.Sprintf("%s: template %q has type %s, used as %s", x.field, x.t.Name, x.t.Type, x.want))
		}
	}
	return out
}

// SplitField returns the field path of a TemplatesFor problem ("spec.reconciler: ...").
func SplitField(problem string) (field, msg string) {
	field, msg, _ = strings.Cut(problem, ": ")
	return field, msg
}
