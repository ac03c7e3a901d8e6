package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/pipeline"
)

func newDiffCmd(e *env) *cobra.Command {
	var o hubOutputOptions
	cmd := &cobra.Command{
		Use:     "diff ENV1 ENV2",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform diff --hub https://hub.example.com stage prod",
		Short:   "Compare two environments workload by workload",
		Long: "diff compares the latest desired states of two environments on the hub: per workload, the\n" +
			"deployment targets, cluster types, versions reported by application CI and the composed\n" +
			"configuration values that differ.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			d, err := c.Diff(cmd.Context(), args[0], args[1])
			if err != nil {
				return err
			}
			return writeOut(e, o.out, d, func(w io.Writer) error { return diffText(w, d) })
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	return cmd
}

func diffText(w io.Writer, d hub.EnvDiff) error {
	t := command.NewTable(w, "WORKLOAD", "SAME", "CLUSTER TYPES ("+d.From+")", "CLUSTER TYPES ("+d.To+")",
		"VERSIONS ("+d.From+")", "VERSIONS ("+d.To+")")
	for _, wd := range d.Workloads {
		t.Row(wd.Workload, yesNo(wd.Same), pipeline.ListOrNone(wd.From.ClusterTypes), pipeline.ListOrNone(wd.To.ClusterTypes),
			versionsText(wd.From.Versions), versionsText(wd.To.Versions))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	for _, wd := range d.Workloads {
		for _, c := range wd.Config {
			expected := ""
			if c.Expected {
				expected = " (differs by the environment's name, as expected)"
			}
			fmt.Fprintf(w, "%s: config %s%s:\n%s\n%s\n", wd.Workload, c.Key, expected, sideText(d.From, c.From), sideText(d.To, c.To))
		}
	}
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// versionsText lists target=version pairs, sorted.
func versionsText(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

// sideText is one environment's values of a key: "  ENV: VALUE", a structured value as YAML
// on the lines below.
func sideText(env string, vs []any) string {
	text := valuesText(vs)
	if strings.HasPrefix(text, "\n") {
		return "  " + env + ":" + text
	}
	return "  " + env + ": " + text
}

func valuesText(vs []any) string {
	if len(vs) == 0 {
		return "(unset)"
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		text := command.Value(v)
		if strings.Contains(text, "\n") {
			text = "\n    " + strings.ReplaceAll(text, "\n", "\n    ")
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, " | ")
}
