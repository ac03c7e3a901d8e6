package cli

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/gitops"
	"github.com/fleetform/fleetform/internal/promote"
)

// hubOptions are the flags of the commands that talk to a hub (provisional: replaced by
// the hub client's options).
type hubOptions struct{ url string }

func (o *hubOptions) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.url, "hub", "", "hub URL")
}

func (o *hubOptions) promoteHub(context.Context) (promote.Hub, error) {
	return nil, failed(ExitUsage, errors.New("--hub is not available yet"))
}

func (o *hubOptions) postDesired(context.Context, *result, *gitops.Result) error { return nil }
