package kube

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// keptFields are the fields Parse reads besides metadata; compact keeps only these, so that
// the informers' caches stay small whatever the objects hold (Argo CD Applications carry
// their whole resource tree and history in their status).
var keptFields = [][]string{
	{"spec", "path"}, {"spec", "targetNamespace"}, {"spec", "sourceRef"},
	{"spec", "source", "path"}, {"spec", "destination", "namespace"},
	{"status", "observedGeneration"}, {"status", "lastAppliedRevision"}, {"status", "lastAttemptedRevision"},
	{"status", "artifact", "revision"},
	{"status", "sync", "status"}, {"status", "sync", "revision"}, {"status", "sync", "revisions"},
	{"status", "health", "status"}, {"status", "health", "message"},
	{"status", "operationState", "phase"}, {"status", "operationState", "message"},
	{"status", "operationState", "syncResult", "revision"}, {"status", "operationState", "syncResult", "revisions"},
}

// compact is the informers' transform: it replaces an object by the fields Parse reads.
// Anything else than an *unstructured.Unstructured (a tombstone) passes unchanged.
func compact(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := &unstructured.Unstructured{Object: map[string]any{}}
	out.SetAPIVersion(u.GetAPIVersion())
	out.SetKind(u.GetKind())
	out.SetNamespace(u.GetNamespace())
	out.SetName(u.GetName())
	out.SetUID(u.GetUID())
	out.SetResourceVersion(u.GetResourceVersion())
	out.SetGeneration(u.GetGeneration())
	labels := map[string]string{}
	for k, v := range u.GetLabels() {
		if strings.HasPrefix(k, "fleetform.io/") {
			labels[k] = v
		}
	}
	if len(labels) > 0 {
		out.SetLabels(labels)
	}
	for _, path := range keptFields {
		if v, found, _ := unstructured.NestedFieldNoCopy(u.Object, path...); found {
			_ = unstructured.SetNestedField(out.Object, runtime.DeepCopyJSONValue(v), path...)
		}
	}
	copySlice(u, out, func(m map[string]any) map[string]any {
		return pick(m, "type", "status", "reason", "message")
	}, "status", "conditions")
	copySlice(u, out, func(m map[string]any) map[string]any { return pick(m, "path") }, "spec", "sources")
	if history, _, _ := unstructured.NestedSlice(u.Object, "status", "history"); len(history) > 0 {
		if last, ok := history[len(history)-1].(map[string]any); ok {
			_ = unstructured.SetNestedSlice(out.Object, []any{pick(last, "revision", "revisions")}, "status", "history")
		}
	}
	return out, nil
}

// copySlice copies the list at path, each item reduced by keep.
func copySlice(from, to *unstructured.Unstructured, keep func(map[string]any) map[string]any, path ...string) {
	list, found, _ := unstructured.NestedFieldNoCopy(from.Object, path...)
	items, ok := list.([]any)
	if !found || !ok {
		return
	}
	out := make([]any, 0, len(items))
	for _, item := range items {
		if m, ok := item.(map[string]any); ok {
			out = append(out, keep(m))
		}
	}
	_ = unstructured.SetNestedSlice(to.Object, out, path...)
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = runtime.DeepCopyJSONValue(v)
		}
	}
	return out
}
