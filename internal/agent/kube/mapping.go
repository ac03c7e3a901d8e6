package kube

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/hub"
)

// Ref names one object: its kind, namespace and name.
type Ref struct{ Kind, Namespace, Name string }

// DefaultPlatform is the object `flux bootstrap` creates to sync a cluster's folder.
var DefaultPlatform = Ref{Kind: KindKustomization, Namespace: "flux-system", Name: "flux-system"}

// ParseRef reads "kustomization/NAMESPACE/NAME" or "application/NAMESPACE/NAME" (kinds are
// case-insensitive).
func ParseRef(s string) (Ref, error) {
	parts := strings.Split(s, "/")
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return Ref{}, fmt.Errorf("%q: want kustomization/NAMESPACE/NAME or application/NAMESPACE/NAME", s)
	}
	switch strings.ToLower(parts[0]) {
	case "kustomization", "kustomizations":
		return Ref{KindKustomization, parts[1], parts[2]}, nil
	case "application", "applications":
		return Ref{KindApplication, parts[1], parts[2]}, nil
	}
	return Ref{}, fmt.Errorf("%q: the platform reconciler is a Flux Kustomization or an Argo CD Application", s)
}

func (r Ref) String() string { return r.Kind + " " + r.Namespace + "/" + r.Name }

// Mapping says how objects map to the cluster's platform revision and deployment targets.
type Mapping struct {
	// Platform is the Kustomization or Application that syncs the cluster type's folder of
	// the platform GitOps repository, used when no such object is labelled
	// fleetform.io/platform=true (default DefaultPlatform).
	Platform Ref
	// LabelOnly maps objects to deployment targets by LabelDeploymentTarget only, without
	// the Kalypso naming convention.
	LabelOnly bool
}

// TargetOf returns the deployment target an object reconciles, "" for none: the value of
// its fleetform.io/deployment-target label; without it, the Kalypso naming convention
// (unless LabelOnly): "env.workspace.application.workload.target[.clusterType]" gives
// target, "env.workload.target[.x]" gives target, and a name without dots is the target's
// name itself (Kalypso's templates name their objects after the deployment target).
func (m Mapping) TargetOf(o Object) string {
	if o.Target != "" {
		return o.Target
	}
	if m.LabelOnly {
		return ""
	}
	parts := strings.Split(o.Name, ".")
	switch {
	case len(parts) >= 5:
		return parts[4]
	case len(parts) >= 3:
		return parts[2]
	case len(parts) == 1:
		return o.Name
	}
	return ""
}

// Build derives the cluster's report from its objects: the revision the platform
// reconciler applied, the cluster's status and one entry per deployment target. The
// report's ObservedAt is left for the caller. It returns an error saying what is missing
// when there is nothing to report yet (no platform reconciler, or no revision).
func Build(cluster string, objs []Object, m Mapping) (hub.Report, error) {
	objs = slices.Clone(objs)
	slices.SortFunc(objs, func(a, b Object) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	platform, ok := findPlatform(objs, cmp.Or(m.Platform, DefaultPlatform))
	if !ok {
		return hub.Report{}, fmt.Errorf("no platform reconciler: neither an object labelled %s=true nor %s", LabelPlatform, cmp.Or(m.Platform, DefaultPlatform))
	}
	var source *Object
	if platform.Source != "" {
		for i := range objs {
			if objs[i].Kind == KindGitRepository && objs[i].Namespace+"/"+objs[i].Name == platform.Source {
				source = &objs[i]
			}
		}
	}
	revision := cmp.Or(platform.Revision, platform.Attempted)
	if revision == "" && source != nil {
		revision = source.Revision
	}
	if revision == "" {
		return hub.Report{}, fmt.Errorf("%s has no revision yet", platform.Ref())
	}
	groups := map[string][]Object{}
	for _, o := range objs {
		if o.Ref() == platform.Ref() || (source != nil && o.Ref() == source.Ref()) {
			continue
		}
		if t := m.TargetOf(o); t != "" {
			groups[t] = append(groups[t], o)
		}
	}
	r := hub.Report{Cluster: cluster, Revision: revision, GitOpsPath: cleanPath(platform.Path)}
	worst := platform.Status
	var problems []string
	if platform.Status != hub.Ready {
		problems = append(problems, platform.Ref()+": "+platform.Message)
	}
	for _, t := range slices.Sorted(maps.Keys(groups)) {
		d, problem := deployment(t, groups[t])
		r.Deployments = append(r.Deployments, d)
		worst = worse(worst, d.Status)
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	r.Status = map[hub.DeploymentStatus]hub.ClusterStatus{
		hub.Ready: hub.Compliant, hub.Failed: hub.NonCompliant, hub.DeploymentProgress: hub.Progressing,
	}[worst]
	r.Message = strings.Join(problems, "; ")
	return r, nil
}

// findPlatform returns the object labelled fleetform.io/platform=true (the first in kind,
// namespace, name order), else the one ref names.
func findPlatform(objs []Object, ref Ref) (Object, bool) {
	for _, o := range objs {
		if o.Platform && o.Kind != KindGitRepository {
			return o, true
		}
	}
	for _, o := range objs {
		if o.Kind == ref.Kind && o.Namespace == ref.Namespace && o.Name == ref.Name {
			return o, true
		}
	}
	return Object{}, false
}

// deployment combines the objects of one deployment target: the objects that apply
// (Kustomizations, Applications) decide, the worst of them wins; a GitRepository counts
// only when it fails (the target cannot get new revisions). Without an applying object,
// the target is Progressing. It also returns the first problem, for the message.
func deployment(target string, objs []Object) (hub.DeploymentReport, string) {
	d := hub.DeploymentReport{DeploymentTarget: target, Status: hub.Ready}
	var applier, fetcher *Object
	problem := ""
	for i := range objs {
		o := &objs[i]
		if o.Kind == KindGitRepository {
			fetcher = cmp.Or(fetcher, o)
			if o.Status != hub.Failed {
				continue
			}
		} else {
			applier = cmp.Or(applier, o)
		}
		d.Status = worse(d.Status, o.Status)
		if o.Status != hub.Ready && problem == "" {
			problem = target + ": " + o.Ref() + ": " + o.Message
		}
	}
	switch {
	case applier != nil:
		d.Revision, d.Namespace = applier.Revision, applier.DestinationNamespace
	case fetcher != nil:
		d.Revision = fetcher.Revision
		d.Status = worse(d.Status, hub.DeploymentProgress)
		if problem == "" {
			problem = target + ": nothing applies " + fetcher.Ref() + " yet"
		}
	}
	return d, problem
}

func worse(a, b hub.DeploymentStatus) hub.DeploymentStatus {
	rank := map[hub.DeploymentStatus]int{hub.Ready: 0, hub.DeploymentProgress: 1, hub.Failed: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// cleanPath returns a repository folder without "./" and trailing "/".
func cleanPath(p string) string {
	p = strings.TrimPrefix(strings.TrimSuffix(p, "/"), "./")
	if p == "." {
		return ""
	}
	return p
}
