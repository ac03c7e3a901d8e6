package kube

import (
	"cmp"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetform/fleetform/internal/hub"
)

// Kinds of the objects the agent reads.
const (
	KindGitRepository = "GitRepository"
	KindKustomization = "Kustomization"
	KindApplication   = "Application"
)

// Labels the agent reads.
const (
	// LabelDeploymentTarget names the deployment target an object reconciles; the built-in
	// templates (builtin/flux, builtin/argocd) set it.
	LabelDeploymentTarget = "fleetform.io/deployment-target"
	// LabelPlatform set to "true" marks the object that syncs the cluster type's folder of
	// the platform GitOps repository.
	LabelPlatform = "fleetform.io/platform"
)

// Object is what the agent keeps of one Flux or Argo CD object.
type Object struct {
	Kind, Namespace, Name string
	// Target is the value of LabelDeploymentTarget ("" when absent).
	Target string
	// Platform is set when LabelPlatform is "true".
	Platform bool
	Status   hub.DeploymentStatus
	// Message explains Status (the condition or operation message).
	Message string
	// Revision is the revision the object applied (Kustomization, Application) or fetched
	// (GitRepository), normalized by NormalizeRevision; "" when there is none yet.
	Revision string
	// Attempted is the revision a Kustomization last attempted.
	Attempted string
	// Path is the folder of the repository it reconciles (spec.path, spec.source.path).
	Path string
	// DestinationNamespace is spec.targetNamespace or spec.destination.namespace.
	DestinationNamespace string
	// Source is the "namespace/name" of a Kustomization's GitRepository.
	Source string
}

// Ref returns "Kind namespace/name".
func (o Object) Ref() string { return o.Kind + " " + o.Namespace + "/" + o.Name }

// Parse reads an object of one of the three kinds.
func Parse(u *unstructured.Unstructured) Object {
	labels := u.GetLabels()
	o := Object{
		Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(),
		Target: labels[LabelDeploymentTarget], Platform: labels[LabelPlatform] == "true",
	}
	switch o.Kind {
	case KindKustomization:
		o.Status, o.Message = fluxStatus(u)
		o.Revision = NormalizeRevision(str(u, "status", "lastAppliedRevision"))
		o.Attempted = NormalizeRevision(str(u, "status", "lastAttemptedRevision"))
		o.Path = str(u, "spec", "path")
		o.DestinationNamespace = str(u, "spec", "targetNamespace")
		if str(u, "spec", "sourceRef", "kind") == KindGitRepository {
			ns := str(u, "spec", "sourceRef", "namespace")
			if ns == "" {
				ns = o.Namespace
			}
			o.Source = ns + "/" + str(u, "spec", "sourceRef", "name")
		}
	case KindGitRepository:
		o.Status, o.Message = fluxStatus(u)
		o.Revision = NormalizeRevision(str(u, "status", "artifact", "revision"))
	case KindApplication:
		o.Status, o.Message = argoStatus(u)
		o.Revision = NormalizeRevision(argoRevision(u))
		o.Path = str(u, "spec", "source", "path")
		if o.Path == "" {
			o.Path = firstSourcePath(u)
		}
		o.DestinationNamespace = str(u, "spec", "destination", "namespace")
	}
	return o
}

type condition struct{ status, reason, message string }

func conditions(u *unstructured.Unstructured) map[string]condition {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	out := make(map[string]condition, len(list))
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			continue
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		r, _ := m["reason"].(string)
		msg, _ := m["message"].(string)
		out[t] = condition{status: s, reason: r, message: msg}
	}
	return out
}

// fluxStatus maps Flux's kstatus conditions: Stalled, or Ready=False after a failed
// attempt (Reconciling absent or ProgressingWithRetry), is Failed; Reconciling, a
// generation the controller has not observed yet, or no Ready verdict, is Progressing;
// Ready=True is Ready.
func fluxStatus(u *unstructured.Unstructured) (hub.DeploymentStatus, string) {
	conds := conditions(u)
	ready, hasReady := conds["Ready"]
	reconciling := conds["Reconciling"]
	if stalled := conds["Stalled"]; stalled.status == "True" {
		return hub.Failed, stalled.message
	}
	if hasReady && ready.status == "False" && (reconciling.status != "True" || reconciling.reason == "ProgressingWithRetry") {
		return hub.Failed, ready.message
	}
	if reconciling.status == "True" {
		return hub.DeploymentProgress, reconciling.message
	}
	gen := u.GetGeneration()
	observed, found, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if found && gen > observed {
		return hub.DeploymentProgress, fmt.Sprintf("generation %d not observed yet", gen)
	}
	if hasReady && ready.status == "True" {
		return hub.Ready, ready.message
	}
	if ready.message != "" {
		return hub.DeploymentProgress, ready.message
	}
	return hub.DeploymentProgress, "not reconciled yet"
}

// argoStatus maps an Argo CD Application as Argo CD's notification triggers read it: an
// error condition, or a sync operation Failed or in Error, is Failed; a running operation
// is Progressing; health Degraded is Failed; Synced and Healthy is Ready; anything else
// (OutOfSync, Missing, Suspended, Unknown, no status yet) is Progressing.
func argoStatus(u *unstructured.Unstructured) (hub.DeploymentStatus, string) {
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, item := range list {
		if m, ok := item.(map[string]any); ok {
			t, _ := m["type"].(string)
			if strings.HasSuffix(t, "Error") {
				msg, _ := m["message"].(string)
				return hub.Failed, t + ": " + msg
			}
		}
	}
	phase, opMessage := str(u, "status", "operationState", "phase"), str(u, "status", "operationState", "message")
	health, healthMessage := str(u, "status", "health", "status"), str(u, "status", "health", "message")
	sync := str(u, "status", "sync", "status")
	switch {
	case phase == "Failed" || phase == "Error":
		return hub.Failed, cmp.Or(opMessage, "sync "+phase)
	case phase == "Running" || phase == "Terminating":
		return hub.DeploymentProgress, cmp.Or(opMessage, "sync "+phase)
	case health == "Degraded":
		return hub.Failed, cmp.Or(healthMessage, "health Degraded")
	case sync == "Synced" && health == "Healthy":
		return hub.Ready, ""
	}
	return hub.DeploymentProgress, fmt.Sprintf("sync %s, health %s", cmp.Or(sync, "unknown"), cmp.Or(health, "unknown"))
}

// argoRevision returns the revision an Application applied: the synced revision when it is
// Synced, else the revision of its last successful sync operation, else the newest of its
// history, else the revision it compares to.
func argoRevision(u *unstructured.Unstructured) string {
	if str(u, "status", "sync", "status") == "Synced" {
		if r := firstRevision(u, "status", "sync"); r != "" {
			return r
		}
	}
	if str(u, "status", "operationState", "phase") == "Succeeded" {
		if r := firstRevision(u, "status", "operationState", "syncResult"); r != "" {
			return r
		}
	}
	if history, _, _ := unstructured.NestedSlice(u.Object, "status", "history"); len(history) > 0 {
		if m, ok := history[len(history)-1].(map[string]any); ok {
			if r := firstRevision(&unstructured.Unstructured{Object: m}); r != "" {
				return r
			}
		}
	}
	return firstRevision(u, "status", "sync")
}

// firstRevision returns <path>.revision, or the first of <path>.revisions (multi-source).
func firstRevision(u *unstructured.Unstructured, path ...string) string {
	if r := str(u, append(path, "revision")...); r != "" {
		return r
	}
	revs, _, _ := unstructured.NestedStringSlice(u.Object, append(path, "revisions")...)
	if len(revs) > 0 {
		return revs[0]
	}
	return ""
}

func firstSourcePath(u *unstructured.Unstructured) string {
	sources, _, _ := unstructured.NestedSlice(u.Object, "spec", "sources")
	for _, s := range sources {
		if m, ok := s.(map[string]any); ok {
			if p, _ := m["path"].(string); p != "" {
				return p
			}
		}
	}
	return ""
}

// NormalizeRevision returns the commit (or digest, or version) of a reconciler's revision:
// "main@sha1:<hex>" (Flux 2), "main/<hex>" (Flux before 2.0) and "sha256:<hex>" give the
// hex; Argo CD's plain SHAs and Helm chart versions are returned as they are.
func NormalizeRevision(r string) string {
	if i := strings.LastIndexByte(r, '@'); i >= 0 {
		r = r[i+1:]
	}
	if algo, hex, ok := strings.Cut(r, ":"); ok && (algo == "sha1" || algo == "sha256" || algo == "sha384" || algo == "sha512" || algo == "blake3") {
		return hex
	}
	if i := strings.LastIndexByte(r, '/'); i >= 0 && isHex(r[i+1:]) && len(r)-i-1 >= 40 {
		return r[i+1:]
	}
	return r
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

func str(u *unstructured.Unstructured, path ...string) string {
	s, _, _ := unstructured.NestedString(u.Object, path...)
	return s
}
