package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/pipeline"
)

type explainOptions struct {
	cp               controlPlaneOptions
	out              command.Output
	clusterType      string
	deploymentTarget string
}

func newExplainCmd(e *env) *cobra.Command {
	var o explainOptions
	cmd := &cobra.Command{
		Use: "explain [KEY]",
		Example: "  # why is shop-web (not) on large, and where does each value come from?\n" +
			"  fleetform explain --env dev --cluster-type large --deployment-target shop-web\n" +
			"  # one value, as JSON\n" +
			"  fleetform explain --env dev --cluster-type large --deployment-target shop-web REGION -o json\n" +
			"  # where could shop-web go? every cluster type, and why\n" +
			"  fleetform explain --env dev --deployment-target shop-web\n" +
			"  # every deployment target on large, and why\n" +
			"  fleetform explain --env dev --cluster-type large",
		Short: "Explain a deployment target on a cluster type: why it is (not) scheduled, and where every config value comes from",
		Long: "explain answers the scheduling and configuration questions of review:\n" +
			"  --cluster-type CT --deployment-target DT [KEY]  is DT on CT, why (each policy's verdict),\n" +
			"                                                  and where each config value comes from\n" +
			"  --deployment-target DT                          where could DT go? every cluster type, and why\n" +
			"  --cluster-type CT                               every deployment target, on CT or not, and why",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(args); err != nil {
				return err
			}
			return o.run(cmd.Context(), e, args)
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.Bind(cmd)
	cmd.Flags().StringVar(&o.clusterType, "cluster-type", "", "cluster type name")
	cmd.Flags().StringVar(&o.deploymentTarget, "deployment-target", "", "deployment target name (<workload>-<target>)")
	_ = cmd.RegisterFlagCompletionFunc("cluster-type", o.cp.completeFromSnapshot(e, clusterTypeNames))
	_ = cmd.RegisterFlagCompletionFunc("deployment-target", o.cp.completeFromSnapshot(e, targetNames))
	return cmd
}

func (o *explainOptions) validate(args []string) error {
	if err := o.out.Check(); err != nil {
		return err
	}
	switch {
	case o.clusterType == "" && o.deploymentTarget == "":
		return command.Usagef("--cluster-type, --deployment-target or both are required")
	case len(args) == 1 && (o.clusterType == "" || o.deploymentTarget == ""):
		return command.Usagef("a KEY is explained for one pair: give both --cluster-type and --deployment-target")
	}
	return nil
}

func (o *explainOptions) run(ctx context.Context, e *env, args []string) error {
	f, err := o.cp.fleet(e)
	if err != nil {
		return err
	}
	switch {
	case o.clusterType == "":
		doc, err := f.TargetPlaces(ctx, o.cp.env, o.deploymentTarget)
		if err != nil {
			return err
		}
		return o.out.Write(e.Stdout, doc, func(w io.Writer) error { return targetPlacesText(w, doc) })
	case o.deploymentTarget == "":
		doc, err := f.ClusterTypePlaces(ctx, o.cp.env, o.clusterType)
		if err != nil {
			return err
		}
		return o.out.Write(e.Stdout, doc, func(w io.Writer) error { return clusterTypePlacesText(w, doc) })
	}
	key := ""
	if len(args) == 1 {
		key = args[0]
	}
	doc, err := f.Explain(ctx, o.cp.env, o.clusterType, o.deploymentTarget, key)
	if err != nil {
		return err
	}
	return o.out.Write(e.Stdout, doc, func(w io.Writer) error { return explainText(w, doc) })
}

func explainText(w io.Writer, doc *pipeline.Explanation) error {
	state := "is scheduled"
	if !doc.Scheduled {
		state = "is NOT scheduled"
	}
	fmt.Fprintf(w, "%s on %s in %s %s (namespace %s)\n", doc.DeploymentTarget, doc.ClusterType, doc.Environment, state, doc.Namespace)
	for _, r := range doc.Scheduling.Reasons {
		fmt.Fprintf(w, "  %s\n", r)
	}
	if p := doc.Pinned; p != nil {
		fmt.Fprintf(w, "  pinned by spec.pins[%d]: manifests %v", p.Index, p.Manifests)
		if p.Reason != "" {
			fmt.Fprintf(w, " (%s)", p.Reason)
		}
		fmt.Fprintln(w)
	}
	for _, p := range doc.Scheduling.Policies {
		verdict := "does not select it"
		if p.Selected {
			verdict = "selects it"
		}
		fmt.Fprintf(w, "  policy %s %s: %s\n", p.Policy, verdict, strings.Join(p.Reasons, "; "))
	}
	fmt.Fprintln(w)
	keys := make([]string, 0, len(doc.Values))
	for k := range doc.Values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t := command.NewTable(w, "KEY", "VALUE", "SET BY", "AT", "SHADOWS")
	for _, k := range keys {
		v := doc.Values[k]
		var shadows []string
		for _, s := range v.Shadowed {
			shadows = append(shadows, fmt.Sprintf("%s=%s (%s)", s.Source.Name, short(s.Value), s.Source.Level))
		}
		t.Row(k, short(v.Value), fmt.Sprintf("%s/%s (%s)", v.Source.Kind, v.Source.Name, v.Source.Level),
			fmt.Sprintf("%s:%d", v.Source.File, v.Source.Line), strings.Join(shadows, ", "))
	}
	return t.Flush()
}

// short renders a value on one line, cut to a readable length.
func short(v any) string {
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	s = strings.ReplaceAll(s, "\n", `\n`)
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
