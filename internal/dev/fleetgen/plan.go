package fleetgen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// teams are the workspaces, in the order workloads are dealt to them.
var teams = []string{"payments", "identity", "catalog", "analytics", "platform"}

// nouns name the workloads of a team.
var nouns = []string{
	"api", "web", "worker", "gateway", "search", "ledger", "notifier", "scheduler", "cache", "ingest",
	"reports", "auth", "billing", "profile", "export", "importer", "stream", "media", "pricing", "audit",
}

// region is a cloud region: its label value and display name.
type region struct{ name, display string }

var regions = []region{
	{"eastus", "East US"}, {"westus", "West US"}, {"centralus", "Central US"},
	{"northeurope", "North Europe"}, {"westeurope", "West Europe"}, {"uksouth", "UK South"},
	{"francecentral", "France Central"}, {"japaneast", "Japan East"},
	{"southeastasia", "Southeast Asia"}, {"brazilsouth", "Brazil South"},
}

// size is a cluster-type size with the values its config carries.
type size struct {
	name    string
	maxPods int
	memory  string
	weight  int // relative frequency
}

var sizes = []size{
	{"small", 30, "256Mi", 3}, {"medium", 60, "512Mi", 4}, {"large", 110, "1Gi", 2}, {"xlarge", 250, "2Gi", 1},
}

var (
	tiers       = []string{"frontend", "backend", "data"}
	purposes    = []string{"serving", "batch", "canary", "internal"}
	criticality = []string{"high", "medium", "medium", "low", "low"}
)

// plan is the fleet of a spec, decided before any file is written.
type plan struct {
	spec         Spec
	teams        []string
	workloads    []workload
	clusterTypes []clusterType
	regions      []region // the regions that have cluster types, in regions order
}

type workload struct {
	name, team, kind string
	targets          []target
	hasConfig        bool
	replicas         int
}

type target struct {
	name                          string
	tier, purpose, criticality    string
	secretRef, interval, manifest string
}

type clusterType struct {
	name    string
	region  region
	size    size
	edge    bool
	nodes   int
	builtin bool // builtin/* templates, else the Kalypso-style ones
	// reconciler, namespace, config are template names.
	reconciler, namespace, config string
}

func newPlan(spec Spec) *plan {
	// One stream, consumed in a fixed order: cluster types, then workloads and targets.
	rng := rand.New(rand.NewPCG(uint64(spec.Seed), 0x666c656574666f72)) //nolint:gosec // seeded on purpose: the same --seed gives the same fleet ("fleetfor")
	p := &plan{spec: spec}

	usedRegion := make([]bool, len(regions))
	ctWidth := width(spec.ClusterTypes)
	for i := range spec.ClusterTypes {
		ri := rng.IntN(len(regions))
		usedRegion[ri] = true
		sz := pickSize(rng)
		ct := clusterType{
			region: regions[ri], size: sz, edge: rng.IntN(5) == 0, nodes: 3 + rng.IntN(48),
			builtin: i%2 == 0,
		}
		ct.name = fmt.Sprintf("%s-%s-%0*d", ct.region.name, sz.name, ctWidth, i)
		if ct.builtin {
			ct.reconciler, ct.namespace, ct.config = "builtin/flux", "builtin/namespace", "builtin/configmap"
		} else {
			ct.reconciler, ct.namespace, ct.config = "arc-flux", "default", "configmap"
			if i%8 == 7 {
				ct.reconciler = "argocd"
			}
		}
		p.clusterTypes = append(p.clusterTypes, ct)
	}
	for i, used := range usedRegion {
		if used {
			p.regions = append(p.regions, regions[i])
		}
	}

	nWorkloads := max(1, (spec.Targets+TargetsPerWorkload-1)/TargetsPerWorkload)
	p.teams = teams[:min(len(teams), nWorkloads)]
	wWidth, tWidth := width(nWorkloads), width(spec.Targets)
	next := 0 // global target index
	for i := range nWorkloads {
		team := p.teams[i%len(p.teams)]
		noun := nouns[(i/len(p.teams))%len(nouns)]
		w := workload{
			name: fmt.Sprintf("%s-%s-%0*d", team, noun, wWidth, i), team: team, kind: "service",
			hasConfig: i%WorkloadConfigEvery == 0, replicas: 1 + rng.IntN(5),
		}
		if i%7 == 3 {
			w.kind = "job"
		}
		// Spread the targets evenly: the first Targets%nWorkloads workloads get one more.
		n := spec.Targets / nWorkloads
		if i < spec.Targets%nWorkloads {
			n++
		}
		for range n {
			t := target{
				name: fmt.Sprintf("t%0*d", tWidth, next),
				tier: tiers[rng.IntN(len(tiers))], purpose: purposes[rng.IntN(len(purposes))],
				criticality: criticality[rng.IntN(len(criticality))],
			}
			t.manifest = "./" + w.name + "/" + t.name
			if i%len(p.teams) < 2 {
				t.secretRef = team + "-git-credentials"
			}
			if t.criticality == "high" {
				t.interval = "30s"
			}
			w.targets = append(w.targets, t)
			next++
		}
		p.workloads = append(p.workloads, w)
	}
	return p
}

func pickSize(rng *rand.Rand) size {
	total := 0
	for _, s := range sizes {
		total += s.weight
	}
	n := rng.IntN(total)
	for _, s := range sizes {
		if n < s.weight {
			return s
		}
		n -= s.weight
	}
	return sizes[len(sizes)-1]
}

// width is the number of digits of the largest index below n, at least 3.
func width(n int) int { return max(3, len(strconv.Itoa(max(n-1, 0)))) }
