package compose

import (
	"fmt"
	"testing"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/controlplane"
)

// Fleet shape of the benchmarks: 100 cluster types x 1,000 deployment targets (100,000
// pairs) and 200 platform ConfigMaps.
const (
	benchTypes      = 100
	benchTargets    = 1000
	benchWorkloads  = 100 // 10 targets each
	benchRegions    = 10
	benchEnvCMs     = 5
	benchWorkloadCM = 50
	benchTargetCMs  = 35
)

type benchFleet struct {
	snap    *controlplane.Snapshot
	types   []*controlplane.ClusterType
	targets []*controlplane.DeploymentTarget
}

// newBenchFleet generates the fleet in memory: 5 environment-wide ConfigMaps, 10 region
// ConfigMaps, one per cluster type, 50 per workload and 35 per deployment target, 8 keys
// each (one structured), overlapping so that every level overrides some keys.
func newBenchFleet() *benchFleet {
	f := &benchFleet{snap: &controlplane.Snapshot{Environment: "dev"}}
	for i := range benchTypes {
		f.types = append(f.types, &controlplane.ClusterType{ClusterType: &v1alpha1.ClusterType{Metadata: v1alpha1.ObjectMeta{
			Name:   fmt.Sprintf("ct-%03d", i),
			Labels: map[string]string{"region": fmt.Sprintf("region-%d", i%benchRegions), "size": []string{"small", "medium", "large"}[i%3]},
		}}})
	}
	for i := range benchTargets {
		w := fmt.Sprintf("wl-%03d", i%benchWorkloads)
		f.targets = append(f.targets, &controlplane.DeploymentTarget{
			Name:        fmt.Sprintf("%s-t%03d", w, i/benchWorkloads),
			Labels:      map[string]string{"workload": w, "workspace": fmt.Sprintf("team-%d", i%7), "stack": "svc"},
			Environment: "dev", Workload: w, Workspace: fmt.Sprintf("team-%d", i%7),
		})
	}
	add := func(name string, labels map[string]string) {
		data := map[string]string{"RESOURCES": fmt.Sprintf("limits: {cpu: %q}\nsidecars:\n  - name: log\n    image: %s\n", name, name)}
		for k := range 7 {
			data[fmt.Sprintf("KEY_%d", k)] = name
		}
		labels["platform-config"] = "true"
		f.snap.ConfigMaps = append(f.snap.ConfigMaps, &controlplane.ConfigMap{
			ConfigMap: &v1alpha1.ConfigMap{Metadata: v1alpha1.ObjectMeta{Name: name, Labels: labels}, Data: data},
			Source:    controlplane.Source{File: "configs/" + name + ".yaml", Line: 1},
		})
	}
	for i := range benchEnvCMs {
		add(fmt.Sprintf("env-%d", i), map[string]string{})
	}
	for i := range benchRegions {
		add(fmt.Sprintf("region-%d", i), map[string]string{"region": fmt.Sprintf("region-%d", i)})
	}
	for _, ct := range f.types {
		add(ct.Metadata.Name+"-config", map[string]string{"cluster-type": ct.Metadata.Name})
	}
	for i := range benchWorkloadCM {
		add(fmt.Sprintf("wl-%03d-config", i*2), map[string]string{"workload": fmt.Sprintf("wl-%03d", i*2)})
	}
	for i := range benchTargetCMs {
		add(f.targets[i*28].Name+"-config", map[string]string{"deployment-target": f.targets[i*28].Name})
	}
	return f
}

func (f *benchFleet) composeAll(c *Composer) int {
	n := 0
	for _, ct := range f.types {
		for _, dt := range f.targets {
			n += len(c.Compose(ct, dt).Data)
		}
	}
	return n
}

// BenchmarkCompose composes all 100,000 pairs with a new Composer (what one render does).
func BenchmarkCompose(b *testing.B) {
	f := newBenchFleet()
	for b.Loop() {
		if f.composeAll(New(f.snap)) == 0 {
			b.Fatal("empty configs")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(benchTypes*benchTargets), "ns/pair")
}

// BenchmarkComposeCached composes all pairs again with a Composer whose cache is warm: the
// cost of matching alone plus the cache lookup.
func BenchmarkComposeCached(b *testing.B) {
	f := newBenchFleet()
	c := New(f.snap)
	f.composeAll(c)
	for b.Loop() {
		f.composeAll(c)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(benchTypes*benchTargets), "ns/pair")
}

// BenchmarkIndexMatches finds the matching ConfigMaps of all pairs, and nothing else.
func BenchmarkIndexMatches(b *testing.B) {
	f := newBenchFleet()
	c := New(f.snap)
	var buf [32]int
	for b.Loop() {
		for _, ct := range f.types {
			for _, dt := range f.targets {
				c.ix.matches(buf[:0], ct, dt)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(benchTypes*benchTargets), "ns/pair")
}

// BenchmarkIndexGenericScan is the part of BenchmarkIndexMatches spent testing the generic
// (label-matched and environment-wide) ConfigMaps of every pair.
func BenchmarkIndexGenericScan(b *testing.B) {
	f := newBenchFleet()
	ix := New(f.snap).ix
	n := 0
	for b.Loop() {
		for _, ct := range f.types {
			for _, dt := range f.targets {
				for _, i := range ix.generic {
					if Applies(ix.labels[i], ct, dt) {
						n++
					}
				}
			}
		}
	}
	if n == 0 {
		b.Fatal("no generic ConfigMap applied")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(benchTypes*benchTargets), "ns/pair")
}

// TestBenchFleetShape checks that the benchmark fleet exercises every level: each pair gets
// environment-wide, region and cluster-type values, and some get workload and target ones.
func TestBenchFleetShape(t *testing.T) {
	f := newBenchFleet()
	if got := len(f.snap.ConfigMaps); got != 200 {
		t.Errorf("ConfigMaps = %d, want 200", got)
	}
	c := New(f.snap)
	levels := map[string]int{}
	for _, ct := range f.types[:10] {
		for _, dt := range f.targets {
			for _, i := range c.ix.matches(nil, ct, dt) {
				levels[c.contribs[i].level.String()]++
			}
		}
	}
	for _, l := range levelNames {
		if levels[l] == 0 {
			t.Errorf("no ConfigMap of level %s matched: %v", l, levels)
		}
	}
	if got := c.Compose(f.types[0], f.targets[0]).Values["KEY_0"].Source.Name; got != f.targets[0].Name+"-config" {
		t.Errorf("KEY_0 of %s on %s set by %s, want the target's ConfigMap", f.targets[0].Name, f.types[0].Metadata.Name, got)
	}
}
