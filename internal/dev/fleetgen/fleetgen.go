// Package fleetgen generates deterministic synthetic fleets: control planes in the folder
// layout shaped like a real platform (a handful of teams, ~10 deployment targets per
// workload, cluster types spread over regions and sizes, layered platform config), sized
// for the quality-bar benchmarks. The same Spec always produces byte-identical files.
//
// Every generated deployment target is scheduled on every cluster type, so a fleet has
// exactly Targets × ClusterTypes assignments.
package fleetgen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
)

// Defaults of a Spec's zero fields: the fleet of the quality bars (SPEC section 8).
const (
	DefaultTargets      = 1000
	DefaultClusterTypes = 100
	DefaultEnvironment  = "dev"
)

// Shape of the fleet.
const (
	// TargetsPerWorkload is how many deployment targets a workload has in the environment.
	TargetsPerWorkload = 10
	// MaxWorkspaces is the number of teams (workspaces) owning the workloads.
	MaxWorkspaces = 5
	// WorkloadConfigEvery: one workload in this many has its own platform-config ConfigMap.
	WorkloadConfigEvery = 5
)

// Upper bounds of a Spec, so that a typo cannot fill a disk.
const (
	MaxTargets      = 1_000_000
	MaxClusterTypes = 100_000
)

// Spec describes the fleet to generate. Zero fields take the defaults.
type Spec struct {
	// Targets is the number of deployment targets in the environment (default 1000).
	Targets int
	// ClusterTypes is the number of cluster types (default 100).
	ClusterTypes int
	// Environment is the environment name (default "dev").
	Environment string
	// Seed varies labels, sizes and values; equal seeds give equal fleets.
	Seed int64
}

// WithDefaults returns the spec with its zero fields set to the defaults.
func (s Spec) WithDefaults() Spec {
	if s.Targets == 0 {
		s.Targets = DefaultTargets
	}
	if s.ClusterTypes == 0 {
		s.ClusterTypes = DefaultClusterTypes
	}
	if s.Environment == "" {
		s.Environment = DefaultEnvironment
	}
	return s
}

var envNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,30}[a-z0-9])?$`)

// Validate reports a spec that cannot be generated (after defaults).
func (s Spec) Validate() error {
	s = s.WithDefaults()
	switch {
	case s.Targets < 0 || s.Targets > MaxTargets:
		return fmt.Errorf("targets: %d is out of range 1..%d", s.Targets, MaxTargets)
	case s.ClusterTypes < 0 || s.ClusterTypes > MaxClusterTypes:
		return fmt.Errorf("cluster types: %d is out of range 1..%d", s.ClusterTypes, MaxClusterTypes)
	case !envNameRE.MatchString(s.Environment):
		return fmt.Errorf("environment %q: want a DNS label of at most 32 characters (lowercase letters, digits, '-')", s.Environment)
	}
	return nil
}

// Summary counts what a spec generates.
type Summary struct {
	Environment        string `json:"environment"`
	Seed               int64  `json:"seed"`
	Files              int    `json:"files"`
	Workspaces         int    `json:"workspaces"`
	Workloads          int    `json:"workloads"`
	DeploymentTargets  int    `json:"deploymentTargets"`
	ClusterTypes       int    `json:"clusterTypes"`
	BuiltinTemplated   int    `json:"builtinTemplatedClusterTypes"`
	Regions            int    `json:"regions"`
	Templates          int    `json:"templates"`
	ConfigMaps         int    `json:"configMaps"`
	ConfigSchemas      int    `json:"configSchemas"`
	SchedulingPolicies int    `json:"schedulingPolicies"`
	// Assignments is DeploymentTargets × ClusterTypes.
	Assignments int `json:"assignments"`
}

// Describe returns what Generate(spec) produces, without rendering the files.
func Describe(spec Spec) Summary {
	p := newPlan(spec.WithDefaults())
	sum := Summary{
		Environment: p.spec.Environment, Seed: p.spec.Seed, Files: len(p.files()),
		Workspaces: len(p.teams), Workloads: len(p.workloads), DeploymentTargets: p.spec.Targets,
		ClusterTypes: len(p.clusterTypes), Regions: len(p.regions), Templates: len(kalypsoTemplates),
		ConfigSchemas: 1, SchedulingPolicies: len(p.policies()),
		Assignments: p.spec.Targets * len(p.clusterTypes),
	}
	sum.ConfigMaps = 1 + len(p.regions) + len(p.clusterTypes)
	for _, w := range p.workloads {
		if w.hasConfig {
			sum.ConfigMaps++
		}
	}
	for _, ct := range p.clusterTypes {
		if ct.builtin {
			sum.BuiltinTemplated++
		}
	}
	return sum
}

// Generate returns the control plane of spec as path -> content: common content (Workloads,
// Templates) at the root and the environment's content under environments/<env>/.
// Zero fields of spec take the defaults; the spec must be valid (see Validate).
func Generate(spec Spec) map[string][]byte {
	return newPlan(spec.WithDefaults()).files()
}

// Write generates spec into dir, which must not exist or be empty.
func Write(dir string, spec Spec) error {
	if err := spec.Validate(); err != nil {
		return err
	}
	return WriteFiles(dir, Generate(spec))
}

// ErrNotEmpty is returned when the output directory already has files.
var ErrNotEmpty = errors.New("directory is not empty")

// WriteFiles writes files (slash-separated path -> content) into dir, which must not exist
// or be empty: a fleet is never mixed with older files.
func WriteFiles(dir string, files map[string][]byte) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("%s: %w", dir, ErrNotEmpty)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	made := map[string]bool{}
	for _, p := range paths {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if d := filepath.Dir(full); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil { //nolint:gosec // a synthetic control plane for benchmarks, nothing secret
				return err
			}
			made[d] = true
		}
		if err := os.WriteFile(full, files[p], 0o644); err != nil { //nolint:gosec // a synthetic control plane for benchmarks, nothing secret
			return err
		}
	}
	return nil
}
