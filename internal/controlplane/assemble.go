package controlplane

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/access"
)

// origin says which part of the control plane a document was read from; it decides which
// kinds are allowed.
type origin int

const (
	fromEnvironment  origin = iota // the environment's own content, at the tip
	fromCommon                     // common (promotable) content, at the pin
	fromWorkloadRepo               // a registration's repository
)

// builder sorts decoded documents into a Snapshot, checking names and duplicates.
type builder struct {
	snap   *Snapshot
	layout Layout
	seen   map[string]Source // kind/name -> first occurrence
	reads  *reads            // the trees read, for Snapshot.Inputs
}

func newBuilder(env string, layout Layout) *builder {
	return &builder{snap: &Snapshot{Environment: env}, layout: layout, seen: map[string]Source{}}
}

func (b *builder) diag(d Diagnostic) { b.snap.Diagnostics = append(b.snap.Diagnostics, d) }

// claim registers kind/name and reports a duplicate; it returns false for duplicates.
func (b *builder) claim(kind, name string, src Source) bool {
	key := kind + "/" + name
	if first, dup := b.seen[key]; dup {
		b.diag(src.Diag("metadata.name", fmt.Sprintf("duplicate %s %q: already defined at %s", kind, name, where(first)),
			"rename or remove one of them; the first definition is used"))
		return false
	}
	b.seen[key] = src
	return true
}

func where(s Source) string {
	w := fmt.Sprintf("%s:%d", s.File, s.Line)
	if s.Repo != "" {
		w = s.Repo + " " + w
	}
	return w
}

// checkName reports names that cannot be used as Kubernetes names and folder names.
func (b *builder) checkName(src Source, name string) bool {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		b.diag(src.Diag("metadata.name", fmt.Sprintf("invalid name %q: %s", name, strings.Join(errs, "; ")),
			"use lowercase letters, digits, '-' and '.'"))
		return false
	}
	return true
}

func (b *builder) checkLabels(src Source, path string, labels map[string]string) bool {
	ok := true
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		for _, e := range validation.IsQualifiedName(k) {
			b.diag(src.Diag(path+"."+k, fmt.Sprintf("invalid label key %q: %s", k, e), ""))
			ok = false
		}
		for _, e := range validation.IsValidLabelValue(labels[k]) {
			b.diag(src.Diag(path+"."+k, fmt.Sprintf("invalid label value %q: %s", labels[k], e), ""))
			ok = false
		}
	}
	return ok
}

// add sorts one document into the snapshot.
func (b *builder) add(doc document, from origin, reg *WorkloadRegistration) {
	if doc.broken {
		b.addBroken(doc, from)
		return
	}
	src := doc.source
	if from == fromWorkloadRepo && doc.kind != v1alpha1.KindWorkload {
		b.diag(src.Diag("kind", fmt.Sprintf("a workload repository may only hold Workload documents, not %s", doc.kind),
			"platform objects belong in the control plane"))
		return
	}
	if doc.kind == v1alpha1.KindEnvironment {
		b.checkEnvironmentPlace(doc) // Environments are read at the tip by the layout, never from content
		return
	}
	if !b.checkName(src, doc.name) {
		return
	}
	if ap, ok := doc.object.(*v1alpha1.AccessPolicy); ok {
		b.addAccessPolicy(ap, src, from)
		return
	}
	b.addObject(doc, src, reg)
}

// addObject sorts a named document into the snapshot by kind.
func (b *builder) addObject(doc document, src Source, reg *WorkloadRegistration) {
	switch o := doc.object.(type) {
	case *v1alpha1.ClusterType:
		if b.checkLabels(src, "metadata.labels", o.Metadata.Labels) && b.claim(doc.kind, doc.name, src) {
			b.snap.ClusterTypes = append(b.snap.ClusterTypes, &ClusterType{o, src})
		}
	case *v1alpha1.SchedulingPolicy:
		if b.claim(doc.kind, doc.name, src) {
			b.snap.SchedulingPolicies = append(b.snap.SchedulingPolicies, &SchedulingPolicy{o, src})
		}
	case *v1alpha1.Template:
		if b.checkTemplate(o, src) && b.claim(doc.kind, doc.name, src) {
			b.snap.Templates = append(b.snap.Templates, &Template{o, src})
		}
	case *v1alpha1.ConfigMap:
		if b.claim(doc.kind, doc.name, src) {
			b.snap.ConfigMaps = append(b.snap.ConfigMaps, &ConfigMap{o, src})
		}
	case *v1alpha1.ConfigSchema:
		if b.claim(doc.kind, doc.name, src) {
			b.snap.ConfigSchemas = append(b.snap.ConfigSchemas, &ConfigSchema{o, src})
		}
	case *v1alpha1.WorkloadRegistration:
		if b.checkRepoRef(src, "spec.workload", o.Spec.Workload) && b.claim(doc.kind, doc.name, src) {
			b.snap.Registrations = append(b.snap.Registrations, &WorkloadRegistration{o, src})
		}
	case *v1alpha1.Workload:
		b.addWorkload(o, src, reg)
	case *v1alpha1.DeploymentTarget:
		b.addDeploymentTarget(o, src)
	case *v1alpha1.GitOpsRepo:
		b.addGitOpsRepo(o, src)
	case *v1alpha1.BaseRepo:
		b.addBaseRepo(o, src)
	}
}

// checkEnvironmentPlace reports an Environment found in content that does not declare one:
// in the folder layout environments/<name>/ and the common content declare them (read at
// the tip when environments are listed), in the Kalypso layout only .environments/ on main.
func (b *builder) checkEnvironmentPlace(doc document) {
	switch b.layout {
	case LayoutKalypso:
		b.diag(doc.source.Warn("kind", fmt.Sprintf("Environment %q is ignored: environments are declared in .environments/ on the main branch", doc.name), ""))
	}
}

func (b *builder) checkTemplate(t *v1alpha1.Template, src Source) bool {
	switch t.Spec.Type {
	case v1alpha1.TemplateReconciler, v1alpha1.TemplateNamespace, v1alpha1.TemplateConfig:
	default:
		b.diag(src.Diag("spec.type", fmt.Sprintf("unknown template type %q", t.Spec.Type),
			"use reconciler, namespace or config"))
		return false
	}
	if len(t.Spec.Manifests) == 0 {
		b.diag(src.Diag("spec.manifests", "a template needs at least one manifest", ""))
		return false
	}
	return true
}

func (b *builder) checkRepoRef(src Source, path string, r v1alpha1.RepoRef) bool {
	if r.Repo == "" {
		b.diag(src.Diag(path+".repo", "repo is required", ""))
		return false
	}
	ok := true
	for _, f := range []struct{ name, value string }{{"repo", r.Repo}, {"branch", r.Branch}, {"path", r.Path}} {
		if strings.ContainsFunc(f.value, IsControl) {
			b.diag(src.Diag(path+"."+f.name, fmt.Sprintf("%s %q contains a control character (a line break, a tab…)", f.name, f.value),
				"write it on one line, without control characters"))
			ok = false
		}
	}
	return ok
}

func (b *builder) addGitOpsRepo(o *v1alpha1.GitOpsRepo, src Source) {
	if !b.checkRepoRef(src, "spec", o.Spec) {
		return
	}
	b.checkGitOpsPath(o, src)
	if prev := b.snap.GitOpsRepo; prev != nil {
		b.diag(src.Diag("metadata.name", fmt.Sprintf("an environment has one GitOpsRepo; %q is already defined at %s",
			prev.Metadata.Name, where(prev.Source)), "remove one of them"))
		return
	}
	b.snap.GitOpsRepo = &GitOpsRepo{o, src}
}

// addBaseRepo records a BaseRepo: the one named main pins the common content, every other
// one brings more common content of its own (read once the environment's content is known).
func (b *builder) addBaseRepo(o *v1alpha1.BaseRepo, src Source) {
	if !b.claim(v1alpha1.KindBaseRepo, o.Metadata.Name, src) {
		return
	}
	if o.Metadata.Name == v1alpha1.BaseRepoName {
		b.snap.BaseRepo = &BaseRepo{o, src}
		return
	}
	if b.checkRepoRef(src, "spec", o.Spec.RepoRef) {
		b.snap.ExtraBaseRepos = append(b.snap.ExtraBaseRepos, &BaseRepo{o, src})
	}
}

// addAccessPolicy records an AccessPolicy of the common part without problems; one with
// problems is left out whole, so that a mistake never grants anything.
func (b *builder) addAccessPolicy(o *v1alpha1.AccessPolicy, src Source, from origin) {
	if from != fromCommon {
		b.diag(src.Diag("kind", fmt.Sprintf("AccessPolicy %q is ignored: access policies are read from the common part only", o.Metadata.Name),
			"move it to the common content (in the Kalypso layout: the main branch), where it is reviewed and promoted like the rest"))
		return
	}
	problems := access.Check(o)
	for _, p := range problems {
		b.diag(src.Diag(p.Path, p.Message+"; the whole policy is left out: it grants nothing until this is fixed", p.Hint))
	}
	if len(problems) == 0 && b.claim(v1alpha1.KindAccessPolicy, o.Metadata.Name, src) {
		b.snap.AccessPolicies = append(b.snap.AccessPolicies, &AccessPolicy{o, src})
	}
}

func checkDNSName(name string) string {
	errs := validation.IsDNS1123Subdomain(name)
	if len(errs) == 0 {
		return ""
	}
	return strings.Join(errs, "; ")
}

// addBroken records a control-plane document that failed to load and may carry
// configuration: a platform ConfigMap, a ConfigSchema, or a document whose kind is unknown.
// (A broken workload, policy, cluster type or template simply is absent: what depends on
// it fails or disappears, and apply keeps what was rendered for it.)
func (b *builder) addBroken(doc document, from origin) {
	if from == fromWorkloadRepo {
		return
	}
	switch doc.kind {
	case "", v1alpha1.KindConfigSchema:
	case v1alpha1.KindConfigMap:
		if doc.labelsKnown && doc.labels[v1alpha1.LabelPlatformConfig] != "true" && !strings.HasPrefix(doc.name, "azure-app-config") {
			return // not a source of platform configuration
		}
	default:
		return
	}
	b.snap.Broken = append(b.snap.Broken, Broken{
		Kind: doc.kind, Name: doc.name, Labels: doc.labels, LabelsKnown: doc.labelsKnown, Source: doc.source,
	})
}
