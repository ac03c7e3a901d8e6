package cli

import (
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

// hubOptions are the --hub flag, and what the commands that take it make of the hub.
type hubOptions struct{ command.Hub }

// hub is the hub the use cases talk to through --hub (nil without it).
func (o *hubOptions) hub() (fleet.Hub, error) {
	if o.URL == "" {
		return nil, nil
	}
	c, err := o.Client()
	if err != nil {
		return nil, err
	}
	return fleet.RemoteHub(c), nil
}
