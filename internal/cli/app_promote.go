package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newAppPromoteCmd(_ *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "promote",
		Example: "  fleetform app promote --source . --config-repo ../hello-config --gitops ../hello-gitops.git --from dev --to stage --hub http://hub:8080",
		Short:   "Deploy the version an environment runs to the next one, when the hub says it works there",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return failed(ExitFailed, errors.New("app promote: not implemented yet"))
		},
	}
	return cmd
}
