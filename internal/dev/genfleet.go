package dev

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
)

type genFleetOptions struct {
	out          command.Output
	dir          string
	targets      int
	clusterTypes int
	env          string
	seed         int64
}

type genFleetJSON struct {
	Out string `json:"out"`
	fleetgen.Summary
}

func newGenFleetCmd(e *env) *cobra.Command {
	var o genFleetOptions
	cmd := &cobra.Command{
		Use:   "gen-fleet",
		Short: "Write a deterministic synthetic control plane (folder layout) for benchmarks",
		Long: "gen-fleet writes a synthetic control plane into --out (which must not exist or be empty):\n" +
			"about 10 deployment targets per Workload from 5 workspaces in common content, and in\n" +
			"environments/<env>/ the cluster types (over 10 regions, half on built-in templates, half on\n" +
			"Kalypso-style ones), layered platform-config ConfigMaps, a ConfigSchema, a GitOpsRepo and\n" +
			"scheduling policies that put every target on every cluster type: --targets x --cluster-types\n" +
			"assignments. The same flags always write the same bytes.",
		Example: "  fleetform-dev gen-fleet --out /tmp/fleet\n" +
			"  # then, with fleetform: render --control-plane /tmp/fleet --env dev --out /tmp/fleet-out",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := o.out.Check(); err != nil {
				return err
			}
			spec, err := o.spec()
			if err != nil {
				return err
			}
			files := fleetgen.Generate(spec)
			if err := fleetgen.WriteFiles(o.dir, files); err != nil {
				if errors.Is(err, fleetgen.ErrNotEmpty) {
					err = fmt.Errorf("%w; choose a new --out", err)
				}
				return err
			}
			doc := genFleetJSON{Out: o.dir, Summary: fleetgen.Describe(spec)}
			return o.out.Write(e.Stdout, doc, func(w io.Writer) error {
				s := doc.Summary
				if _, err := fmt.Fprintf(w, "wrote %d files into %s (environment %s, seed %d):\n", s.Files, o.dir, s.Environment, s.Seed); err != nil {
					return err
				}
				t := command.NewTable(w, "  KIND", "COUNT", "DETAILS")
				t.Row("  Workload", fmt.Sprint(s.Workloads), fmt.Sprintf("%d workspaces, %d deployment targets", s.Workspaces, s.DeploymentTargets))
				t.Row("  ClusterType", fmt.Sprint(s.ClusterTypes), fmt.Sprintf("%d regions, %d on built-in templates", s.Regions, s.BuiltinTemplated))
				t.Row("  Template", fmt.Sprint(s.Templates), "Kalypso-style")
				t.Row("  ConfigMap", fmt.Sprint(s.ConfigMaps), "platform-config: environment, region, cluster-type and workload levels")
				t.Row("  ConfigSchema", fmt.Sprint(s.ConfigSchemas), "applies to every assignment")
				t.Row("  SchedulingPolicy", fmt.Sprint(s.SchedulingPolicies), "one per workspace, selecting every cluster type, and 2 overlapping")
				t.Row("  GitOpsRepo", "1", "branch "+s.Environment)
				if err := t.Flush(); err != nil {
					return err
				}
				_, err := fmt.Fprintf(w, "assignments: %d (%d deployment targets x %d cluster types)\n", s.Assignments, s.DeploymentTargets, s.ClusterTypes)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "out", "", "folder to write the control plane into; must not exist or be empty")
	f.IntVar(&o.targets, "targets", fleetgen.DefaultTargets, "number of deployment targets")
	f.IntVar(&o.clusterTypes, "cluster-types", fleetgen.DefaultClusterTypes, "number of cluster types")
	f.StringVar(&o.env, "env", fleetgen.DefaultEnvironment, "environment name")
	f.Int64Var(&o.seed, "seed", 0, "seed of labels, sizes and values")
	o.out.Bind(cmd)
	return cmd
}

func (o *genFleetOptions) spec() (fleetgen.Spec, error) {
	if o.dir == "" {
		return fleetgen.Spec{}, command.Usage(fmt.Errorf("--out is required"))
	}
	if o.targets < 1 || o.clusterTypes < 1 {
		return fleetgen.Spec{}, command.Usage(fmt.Errorf("--targets and --cluster-types must be at least 1"))
	}
	spec := fleetgen.Spec{Targets: o.targets, ClusterTypes: o.clusterTypes, Environment: o.env, Seed: o.seed}
	if o.env == "" {
		return spec, command.Usage(fmt.Errorf("--env must not be empty"))
	}
	if err := spec.Validate(); err != nil {
		return spec, command.Usage(err)
	}
	return spec, nil
}
