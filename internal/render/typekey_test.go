package render_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/render"
)

// typeKeyFleet is a control plane with config at every level (environment, labels, cluster
// type, workload, deployment target, Azure keys), schemas, a pin-free workload with three
// targets and three cluster types.
func typeKeyFleet() map[string]string {
	fleet := map[string]string{
		"environments/dev/environment.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Environment
metadata: {name: dev}
spec:
  controlPlane: {repo: https://example.com/cp, branch: main, path: .}
`,
		"environments/dev/policy.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: all}
spec:
  deploymentTargetSelector: {labelSelector: {}}
  clusterTypeSelector: {labelSelector: {}}
`,
		"environments/dev/config.yaml": `# environment-wide
apiVersion: v1
kind: ConfigMap
metadata: {name: dev-config, labels: {platform-config: "true"}}
data: {REPLICAS: "2", LOG_LEVEL: info}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: east-region, labels: {platform-config: "true", region: east}}
data: {ZONE: eu-1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shop-config, labels: {platform-config: "true", workload: shop}}
data: {DB: shop-db}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, labels: {platform-config: "true", deployment-target: shop-web}}
data: {CACHE: "on"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: azure-app-config}
data: {region.east.FEATURE: "x", cluster-type.north.FEATURE: "y"}
---
apiVersion: scheduler.kalypso.io/v1alpha1
kind: ConfigSchema
metadata: {name: required}
spec:
  schema: '{"type": "object", "required": ["REPLICAS"]}'
`,
		"shop.yaml": `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: shop, labels: {workspace: retail}}
spec:
  deploymentTargets:
    - {name: api, environment: dev, labels: {tier: back}, manifests: {repo: https://example.com/shop, branch: main, path: ./api}}
    - {name: db, environment: dev, labels: {tier: back}, manifests: {repo: https://example.com/shop, branch: main, path: ./db}}
    - {name: web, environment: dev, labels: {tier: front}, manifests: {repo: https://example.com/shop, branch: main, path: ./web}}
`,
	}
	for _, ct := range []string{"east", "north", "west"} {
		fleet["environments/dev/cluster-types/"+ct+".yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: ClusterType
metadata: {name: ` + ct + `, labels: {region: ` + ct + `}}
spec: {reconciler: builtin/flux, namespaceService: builtin/namespace, configType: builtin/configmap}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ` + ct + `-config, labels: {platform-config: "true", cluster-type: ` + ct + `}}
data: {NODE_COUNT: "3"}
`
	}
	return fleet
}

// newKeyRenderer writes the fleet into a folder and returns a renderer of its environment dev.
func newKeyRenderer(t *testing.T, fleet map[string]string) *render.Renderer {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, fleet)
	snap, sched := loadDev(t, dir)
	return render.NewRenderer(snap, sched, render.Options{})
}

// typeKeys loads the fleet and returns each cluster type's key, and each assignment's input
// digest and key (by cluster type, then deployment target).
func typeKeys(t *testing.T, fleet map[string]string) (keys map[string]string, digests, akeys map[string]map[string]string) {
	t.Helper()
	rr := newKeyRenderer(t, fleet)
	rr.Prepare()
	out := rr.Output()
	byType := map[string][]*render.Assignment{}
	digests, akeys = map[string]map[string]string{}, map[string]map[string]string{}
	for i := range out.Assignments {
		a := &out.Assignments[i]
		if a.Err != nil {
			t.Fatalf("%s on %s: %v", a.DeploymentTarget, a.ClusterType, a.Err)
		}
		byType[a.ClusterType] = append(byType[a.ClusterType], a)
		if digests[a.ClusterType] == nil {
			digests[a.ClusterType], akeys[a.ClusterType] = map[string]string{}, map[string]string{}
		}
		digests[a.ClusterType][a.DeploymentTarget] = a.InputDigest
	}
	keys = map[string]string{}
	for _, ct := range out.ClusterTypes {
		for i, k := range rr.AssignmentKeys(ct, byType[ct]) {
			akeys[ct][byType[ct][i].DeploymentTarget] = k
		}
		if len(akeys[ct]) != len(byType[ct]) {
			t.Fatalf("cluster type %s: keys %v", ct, akeys[ct])
		}
		if keys[ct] = rr.TypeKey(ct, byType[ct]); keys[ct] == "" {
			t.Fatalf("cluster type %s has no key", ct)
		}
	}
	return keys, digests, akeys
}

// TestTypeKey: a cluster type's key changes when an input of one of its assignments does
// (an unchanged key with a changed input digest would leave stale files), and a change
// that concerns only another cluster type leaves it as it is.
func TestTypeKey(t *testing.T) {
	base := typeKeyFleet()
	keys, digests, akeys := typeKeys(t, base)
	if got := slices.Sorted(maps.Keys(keys)); !slices.Equal(got, []string{"east", "north", "west"}) {
		t.Fatalf("cluster types %v", got)
	}
	all := []string{"east", "north", "west"}
	edit := func(file, old, new string) func(map[string]string) {
		return func(f map[string]string) {
			if !strings.Contains(f[file], old) {
				t.Fatalf("%s has no %q", file, old)
			}
			f[file] = strings.Replace(f[file], old, new, 1)
		}
	}
	cases := []struct {
		name    string
		change  func(map[string]string)
		changed []string // the cluster types whose key must change (nil: none may)
	}{
		{"a comment", edit("environments/dev/config.yaml", "# environment-wide", "# for every cluster type"), nil},
		{"an environment-wide value", edit("environments/dev/config.yaml", "LOG_LEVEL: info", "LOG_LEVEL: debug"), all},
		{"one cluster type's value", edit("environments/dev/cluster-types/north.yaml", `NODE_COUNT: "3"`, `NODE_COUNT: "5"`), []string{"north"}},
		{"a new source naming one cluster type", func(f map[string]string) {
			f["environments/dev/west-extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a-west, labels: {platform-config: \"true\", cluster-type: west}}\ndata: {EXTRA: \"1\"}\n"
		}, []string{"west"}},
		{"a labelled source", edit("environments/dev/config.yaml", "ZONE: eu-1", "ZONE: eu-2"), all},
		{"a workload's source", edit("environments/dev/config.yaml", "DB: shop-db", "DB: shop-db-2"), all},
		{"a target's source", edit("environments/dev/config.yaml", `CACHE: "on"`, `CACHE: "off"`), all},
		{"an Azure key", edit("environments/dev/config.yaml", `region.east.FEATURE: "x"`, `region.east.FEATURE: "z"`), all},
		{"an Azure key naming a cluster type", edit("environments/dev/config.yaml", `cluster-type.north.FEATURE: "y"`, `cluster-type.north.FEATURE: "w"`), []string{"north"}},
		{"a schema", edit("environments/dev/config.yaml", `"required": ["REPLICAS"]`, `"required": ["LOG_LEVEL"]`), all},
		{"a target's label", edit("shop.yaml", "labels: {tier: front}", "labels: {tier: edge}"), all},
		{"a target's manifests", edit("shop.yaml", "path: ./web}", "path: ./web-v2}"), all},
		{"a cluster type's label", edit("environments/dev/cluster-types/east.yaml", "labels: {region: east}", "labels: {region: east, size: large}"), []string{"east"}},
		{"a cluster type's template", edit("environments/dev/cluster-types/west.yaml", "reconciler: builtin/flux", "reconciler: builtin/argocd"), []string{"west"}},
		{"a new target", edit("shop.yaml", "    - {name: web,", "    - {name: cdn, environment: dev, manifests: {repo: https://example.com/shop, branch: main, path: ./cdn}}\n    - {name: web,"), all},
	}
	// A change of one target changes the keys of that target's assignments only.
	onlyTargets := map[string][]string{"a target's manifests": {"shop-web"}, "a target's label": {"shop-web"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fleet := maps.Clone(base)
			c.change(fleet)
			got, gotDigests, gotAkeys := typeKeys(t, fleet)
			for ct, byTarget := range gotAkeys {
				for dt, k := range byTarget {
					if k == akeys[ct][dt] && gotDigests[ct][dt] != digests[ct][dt] {
						t.Errorf("%s on %s: the key is the same, the input digest is not", dt, ct)
					}
				}
			}
			for _, ct := range all {
				same := got[ct] == keys[ct]
				if same && !maps.Equal(gotDigests[ct], digests[ct]) {
					t.Errorf("%s: the key is the same, the input digests are not: %v, were %v", ct, gotDigests[ct], digests[ct])
				}
				if want := slices.Contains(c.changed, ct); same == want {
					t.Errorf("%s: key changed %v, want %v", ct, !same, want)
				}
				for dt, k := range gotAkeys[ct] {
					if only, ok := onlyTargets[c.name]; ok && (k != akeys[ct][dt]) != slices.Contains(only, dt) {
						t.Errorf("%s on %s: key changed %v, want %v", dt, ct, k != akeys[ct][dt], slices.Contains(only, dt))
					}
				}
			}
		})
	}
}

// workloadKeys loads the fleet and returns, by cluster type, its key and its workloads'
// keys and targets' identities (by workload).
func workloadKeys(t *testing.T, fleet map[string]string) (types map[string]string, keys, targets map[string]map[string]string) {
	t.Helper()
	rr := newKeyRenderer(t, fleet)
	out := rr.Output()
	byType := map[string][]*render.Assignment{}
	for i := range out.Assignments {
		a := &out.Assignments[i]
		byType[a.ClusterType] = append(byType[a.ClusterType], a)
	}
	types, keys, targets = map[string]string{}, map[string]map[string]string{}, map[string]map[string]string{}
	for _, ct := range out.ClusterTypes {
		key, wks := rr.TypeKeys(ct, byType[ct])
		if key == "" || key != rr.TypeKey(ct, byType[ct]) {
			t.Fatalf("cluster type %s: TypeKeys %q, TypeKey %q", ct, key, rr.TypeKey(ct, byType[ct]))
		}
		types[ct], keys[ct], targets[ct] = key, map[string]string{}, render.WorkloadTargets(byType[ct])
		n := 0
		for i, wk := range wks {
			if i > 0 && wks[i-1].Workload >= wk.Workload {
				t.Fatalf("cluster type %s: workloads out of order: %v", ct, wks)
			}
			keys[ct][wk.Workload] = wk.String()
			n += wk.Assignments
		}
		if n != len(byType[ct]) || len(wks) != len(targets[ct]) {
			t.Fatalf("cluster type %s: %d assignments in %v, want %d", ct, n, wks, len(byType[ct]))
		}
	}
	return types, keys, targets
}

// TestWorkloadKeys: a workload's key changes with an input of one of its assignments, and
// only with those (or with the cluster type's); its targets' identity changes only when its
// targets do; the cluster type's key changes exactly when one of its workloads' keys does.
func TestWorkloadKeys(t *testing.T) {
	base := typeKeyFleet()
	base["cart.yaml"] = `apiVersion: scheduler.kalypso.io/v1alpha1
kind: Workload
metadata: {name: cart, labels: {workspace: retail}}
spec:
  deploymentTargets:
    - {name: x, environment: dev, manifests: {repo: https://example.com/cart, branch: main, path: ./x}}
    - {name: y, environment: dev, manifests: {repo: https://example.com/cart, branch: main, path: ./y}}
`
	types, keys, targets := workloadKeys(t, base)
	cases := []struct {
		name           string
		file, old, new string
		changed        []string // the workloads whose key changes on every cluster type
		targetsChanged []string // the workloads whose targets change
	}{
		{"a shop target's manifests", "shop.yaml", "path: ./web}", "path: ./web-v2}", []string{"shop"}, nil},
		{"a cart target added", "cart.yaml", "    - {name: y,", "    - {name: z, environment: dev, manifests: {repo: https://example.com/cart, branch: main, path: ./z}}\n    - {name: y,", []string{"cart"}, []string{"cart"}},
		{"a cart target renamed", "cart.yaml", "name: y,", "name: w,", []string{"cart"}, []string{"cart"}},
		{"an environment-wide value", "environments/dev/config.yaml", "LOG_LEVEL: info", "LOG_LEVEL: debug", []string{"cart", "shop"}, nil},
		{"a comment", "environments/dev/config.yaml", "# environment-wide", "# everywhere", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fleet := maps.Clone(base)
			if !strings.Contains(fleet[c.file], c.old) {
				t.Fatalf("%s has no %q", c.file, c.old)
			}
			fleet[c.file] = strings.Replace(fleet[c.file], c.old, c.new, 1)
			gotTypes, gotKeys, gotTargets := workloadKeys(t, fleet)
			for ct, byWorkload := range gotKeys {
				anyChanged := false
				for _, wl := range []string{"cart", "shop"} {
					changed := byWorkload[wl] != keys[ct][wl]
					anyChanged = anyChanged || changed
					if changed != slices.Contains(c.changed, wl) {
						t.Errorf("%s on %s: key changed %v", wl, ct, changed)
					}
					if changed := gotTargets[ct][wl] != targets[ct][wl]; changed != slices.Contains(c.targetsChanged, wl) {
						t.Errorf("%s on %s: targets changed %v", wl, ct, changed)
					}
				}
				if (gotTypes[ct] != types[ct]) != anyChanged {
					t.Errorf("%s: cluster type's key changed %v, a workload's %v", ct, gotTypes[ct] != types[ct], anyChanged)
				}
			}
		})
	}
}
