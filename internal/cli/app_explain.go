package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

type appExplainOptions struct {
	app    appOptions
	target string
}

// appExplainValue is one effective value in `app explain -o json`.
func newAppExplainCmd(e *env) *cobra.Command {
	var o appExplainOptions
	cmd := &cobra.Command{
		Use: "explain --target T [KEY]",
		Example: "  # every value of performance-test and the file and line that set it\n" +
			"  fleetform app explain --source . --config-repo ../hello-config --target performance-test\n" +
			"  # one key (a dotted path), as JSON\n" +
			"  fleetform app explain --source . --config-repo ../hello-config --target performance-test logging.level -o json",
		Short: "Show a deployment target's effective values, each with the file and line that set it and what it shadowed",
		Long: "explain composes one target's values as render does and prints each leaf value (a scalar or\n" +
			"a list) with its provenance: the chart's values.yaml, a config repository file and line, or\n" +
			"--set; shadowed lists the lower values of the same key, nearest first. --env defaults to the\n" +
			"target's environment in workload.yaml.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.app.validate(false); err != nil {
				return err
			}
			if o.target == "" {
				return command.Usage(errors.New("--target is required"))
			}
			key := ""
			if len(args) == 1 {
				key = args[0]
			}
			return o.run(cmd, e, key)
		},
	}
	o.app.bind(cmd)
	cmd.Flags().StringVar(&o.target, "target", "", "the deployment target (its name in workload.yaml)")
	return cmd
}

func (o *appExplainOptions) run(cmd *cobra.Command, e *env, key string) error {
	cfg, err := o.app.fleet(e)
	if err != nil {
		return err
	}
	doc, err := fleet.New(cfg).AppExplain(cmd.Context(), o.app.request(), o.target, key)
	if err != nil {
		return err
	}
	return o.app.out.Write(e.Stdout, doc, func(w io.Writer) error { return appExplainText(w, doc) })
}

func appExplainText(w io.Writer, doc *fleet.AppExplanation) error {
	fmt.Fprintf(w, "%s %s in %s (config folder %s)\n", doc.Workload, doc.DeploymentTarget, doc.Environment, doc.ConfigFolder)
	for _, k := range slices.Sorted(maps.Keys(doc.Values)) {
		v := doc.Values[k]
		fmt.Fprintf(w, "%s = %s\n    set in %s\n", k, show(v.Value), v.Source)
		for _, s := range v.Shadowed {
			fmt.Fprintf(w, "    shadows %s from %s\n", show(s.Value), s.Source)
		}
	}
	return nil
}

// show prints a value as JSON.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
