package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type scheduleOptions struct {
	cp  controlPlaneOptions
	out command.Output
}

// scheduleJSON is the contract of `schedule -o json`.
func newScheduleCmd(e *env) *cobra.Command {
	var o scheduleOptions
	cmd := &cobra.Command{
		Use: "schedule",
		Example: "  fleetform schedule --control-plane ./platform --env dev\n" +
			"  fleetform schedule --env prod -o json\n" +
			"  # what if this commit of the common content were promoted?\n" +
			"  fleetform schedule --env prod --common-ref main",
		Short: "Show which deployment targets are scheduled on which cluster types",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.Bind(cmd)
	return cmd
}

func (o *scheduleOptions) print(e *env, doc *fleet.Scheduling) error {
	err := o.out.Write(e.Stdout, doc, func(w io.Writer) error {
		anyPinned := false
		for _, a := range doc.Assignments {
			anyPinned = anyPinned || a.Pinned != nil
		}
		headers := []string{"CLUSTER TYPE", "DEPLOYMENT TARGET", "WORKLOAD", "NAMESPACE", "POLICIES"}
		if anyPinned {
			headers = append(headers, "PINNED")
		}
		t := command.NewTable(w, headers...)
		for _, a := range doc.Assignments {
			row := []string{a.ClusterType, a.DeploymentTarget, a.Workload, a.Namespace, strings.Join(a.Policies, ",")}
			if a.Pinned != nil {
				row = append(row, fmt.Sprintf("spec.pins[%d] %v", a.Pinned.Index, a.Pinned.Manifests))
			}
			t.Row(row...)
		}
		return t.Flush()
	})
	if err != nil {
		return err
	}
	printDiagnostics(e.Stderr, doc.Diagnostics)
	return nil
}

func (o *scheduleOptions) validate() error { return o.out.Check() }

func (o *scheduleOptions) run(ctx context.Context, e *env) error {
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	doc, err := f.Schedule(ctx, o.cp.env)
	switch {
	case doc == nil:
		return err
	case pipeline.ErrorEnvironment(err) != "": // the environment could not be read
		if o.out.Format != "text" {
			if werr := o.out.Write(e.Stdout, doc, nil); werr != nil {
				return werr
			}
		}
		return err
	}
	if perr := o.print(e, doc); perr != nil {
		return perr
	}
	return command.Reported(err)
}
