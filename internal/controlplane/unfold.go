package controlplane

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// addWorkload records a Workload and unfolds its deployment targets, as Kalypso's workload
// controller does: name <workload>-<target>; labels are the target's, then the workload's,
// then workload=<name> and workspace=<workspace>; schemas are the target's, then the
// workload's.
func (b *builder) addWorkload(o *v1alpha1.Workload, src Source, reg *WorkloadRegistration) {
	if !b.checkLabels(src, "metadata.labels", o.Metadata.Labels) || !b.claim(v1alpha1.KindWorkload, o.Metadata.Name, src) {
		return
	}
	w := &Workload{Workload: o, Source: src, Workspace: o.Metadata.Labels[v1alpha1.LabelWorkspace]}
	if reg != nil {
		w.Workspace, w.Registration = reg.Spec.Workspace, reg.Metadata.Name
	}
	b.snap.Workloads = append(b.snap.Workloads, w)

	// Deployment targets live per environment, as in Kalypso: one name may be used once in
	// each environment.
	type nameInEnv struct{ name, env string }
	names := map[nameInEnv]int{}
	for i, t := range o.Spec.DeploymentTargets {
		path := fmt.Sprintf("spec.deploymentTargets[%d]", i)
		key := nameInEnv{t.Name, t.Environment}
		if first, dup := names[key]; dup {
			b.diag(src.Diag(path+".name", fmt.Sprintf("deployment target %q is defined twice for environment %q in this workload (first at %s)",
				t.Name, t.Environment, fmt.Sprintf("spec.deploymentTargets[%d]", first)), "rename one of them"))
			continue
		}
		names[key] = i
		if dt := b.unfoldTarget(w, t, path); dt != nil {
			b.addTarget(dt)
		}
	}
}

func (b *builder) unfoldTarget(w *Workload, t v1alpha1.WorkloadTarget, path string) *DeploymentTarget {
	src := w.Source
	ok := true
	if t.Name == "" {
		b.diag(src.Diag(path+".name", "name is required", ""))
		ok = false
	}
	if t.Environment == "" {
		b.diag(src.Diag(path+".environment", "environment is required", "name the environment this target runs in"))
		ok = false
	}
	if !b.checkLabels(src, path+".labels", t.Labels) {
		ok = false
	}
	if !b.checkNamespace(src, path+".namespace", t.Namespace) {
		ok = false
	}
	if !ok {
		return nil
	}
	labels := make(map[string]string, len(t.Labels)+len(w.Metadata.Labels)+4)
	maps.Copy(labels, t.Labels)
	maps.Copy(labels, w.Metadata.Labels)
	if w.Registration != "" {
		b.addFluxLabels(labels, w, t, path)
	}
	labels[v1alpha1.LabelWorkload] = w.Metadata.Name
	labels[v1alpha1.LabelWorkspace] = w.Workspace
	schemas := make([]SchemaRef, 0, len(t.ConfigSchemas)+len(w.Spec.ConfigSchemas))
	for i, s := range t.ConfigSchemas {
		schemas = append(schemas, SchemaRef{Text: s, Source: src, Path: fmt.Sprintf("%s.configSchemas[%d]", path, i)})
	}
	for i, s := range w.Spec.ConfigSchemas {
		schemas = append(schemas, SchemaRef{Text: s, Source: src, Path: fmt.Sprintf("spec.configSchemas[%d]", i)})
	}
	return &DeploymentTarget{
		Name: w.Metadata.Name + "-" + t.Name, Labels: labels, Environment: t.Environment,
		Manifests: t.Manifests, Namespace: t.Namespace, ConfigSchemas: schemas, Workload: w.Metadata.Name,
		Workspace: w.Workspace, Registration: w.Registration, Source: src, Path: path,
	}
}

// checkNamespace reports a declared namespace that is not a DNS-1123 label ("" is none).
func (b *builder) checkNamespace(src Source, path, ns string) bool {
	if ns == "" {
		return true
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		b.diag(src.Diag(path, fmt.Sprintf("namespace %q is not a valid namespace name: %s", ns, strings.Join(errs, "; ")),
			"use lowercase letters, digits and '-', at most 63 characters"))
		return false
	}
	return true
}

// addFluxLabels adds the labels Flux gives a registered Workload in Kalypso, where the
// registration's Kustomization <environment>-<registration> applies it into the
// environment's namespace: they overwrite the workload's own, as Flux's do.
func (b *builder) addFluxLabels(labels map[string]string, w *Workload, t v1alpha1.WorkloadTarget, path string) {
	name := t.Environment + "-" + w.Registration
	if errs := validation.IsValidLabelValue(name); len(errs) > 0 {
		b.diag(w.Source.Warn(path+".environment", fmt.Sprintf("label %s is not set: %q is not a valid label value (%s)",
			v1alpha1.LabelFluxName, name, strings.Join(errs, "; ")), "use a shorter registration or environment name"))
	} else {
		labels[v1alpha1.LabelFluxName] = name
	}
	labels[v1alpha1.LabelFluxNamespace] = v1alpha1.FluxNamespace
}

// addDeploymentTarget records a DeploymentTarget written directly in the control plane.
func (b *builder) addDeploymentTarget(o *v1alpha1.DeploymentTarget, src Source) {
	if !b.checkLabels(src, "metadata.labels", o.Metadata.Labels) {
		return
	}
	if o.Spec.Environment == "" {
		b.diag(src.Diag("spec.environment", "environment is required", ""))
		return
	}
	if !b.checkNamespace(src, "spec.namespace", o.Spec.Namespace) {
		return
	}
	labels := maps.Clone(o.Metadata.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	schemas := make([]SchemaRef, 0, len(o.Spec.ConfigSchemas))
	for i, s := range o.Spec.ConfigSchemas {
		schemas = append(schemas, SchemaRef{Text: s, Source: src, Path: fmt.Sprintf("spec.configSchemas[%d]", i)})
	}
	b.addTarget(&DeploymentTarget{
		Name: o.Metadata.Name, Labels: labels, Environment: o.Spec.Environment, Manifests: o.Spec.Manifests,
		Namespace: o.Spec.Namespace, ConfigSchemas: schemas, Workload: labels[v1alpha1.LabelWorkload], Workspace: labels[v1alpha1.LabelWorkspace],
		Source: src,
	})
}

func (b *builder) addTarget(dt *DeploymentTarget) {
	path := dt.Path
	if path != "" {
		path += ".name"
	} else {
		path = "metadata.name"
	}
	if errs := checkDNSName(dt.Name); errs != "" {
		b.diag(dt.Source.Diag(path, fmt.Sprintf("deployment target name %q is invalid: %s", dt.Name, errs),
			"use lowercase letters, digits and '-'"))
		return
	}
	key := v1alpha1.KindDeploymentTarget + "/" + dt.Environment + "/" + dt.Name
	if first, dup := b.seen[key]; dup {
		b.diag(dt.Source.Diag(path, fmt.Sprintf("deployment target %q of environment %q is already defined at %s", dt.Name, dt.Environment, where(first)),
			"deployment target names (<workload>-<target>) must be unique in an environment"))
		return
	}
	src := dt.Source
	src.Line = src.LineOf(path)
	b.seen[key] = src
	if len(dt.Name) > validation.LabelValueMaxLength {
		b.diag(dt.Source.Warn(path, fmt.Sprintf("deployment target name %q has %d characters: templates that put it in a label "+
			"(the built-in ones do) render objects the API server rejects (label values are limited to %d)",
			dt.Name, len(dt.Name), validation.LabelValueMaxLength), "use a shorter workload or target name"))
	}
	b.snap.DeploymentTargets = append(b.snap.DeploymentTargets, dt)
}
