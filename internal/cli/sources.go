package cli

import (
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
)

func newSourcesCmd(e *env) *cobra.Command {
	var o hubOutputOptions
	cmd := &cobra.Command{
		Use:     "sources",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform sources --hub http://127.0.0.1:8080",
		Short:   "Show the sources fleetform serve polls, and how each fares",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := o.hub.ClientFor(o.out)
			if err != nil {
				return err
			}
			ss, err := c.Sources(cmd.Context())
			if err != nil {
				return err
			}
			doc := struct {
				Sources []hub.SourceState `json:"sources"`
			}{ss}
			return writeOut(e, o.out, doc, func(w io.Writer) error {
				t := command.NewTable(w, "KIND", "URL", "BRANCH", "COMMIT", "LAST SYNC", "FAILURES", "ERROR")
				for _, s := range ss {
					last := "-"
					if !s.LastSync.IsZero() {
						last = s.LastSync.UTC().Format(time.RFC3339)
					}
					t.Row(s.Kind, s.URL, orDash(s.Branch), orDash(shortSHA(s.LastCommit)), last, strconv.Itoa(s.Failures), orDash(s.LastError))
				}
				return t.Flush()
			})
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	return cmd
}
