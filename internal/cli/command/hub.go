package command

import (
	"errors"
	"net/http"
	"os"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/hub/client"
)

// HubTokenEnv is the environment variable the hub's clients read their token from.
const HubTokenEnv = "FLEETFORM_HUB_TOKEN" //nolint:gosec // the variable's name, not a token

// Hub is the --hub flag: the hub's URL, with the token from HubTokenEnv.
type Hub struct{ URL string }

// Bind adds --hub to cmd.
func (o *Hub) Bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.URL, "hub", "", "hub URL, e.g. https://hub.example.com (token from "+HubTokenEnv+")")
}

// BindRequired binds --hub for the commands that cannot work without it.
func (o *Hub) BindRequired(cmd *cobra.Command) {
	o.Bind(cmd)
	_ = cmd.MarkFlagRequired("hub")
}

// ClientFor checks the output format a read command was given, then returns the hub's
// client (the first steps of every such command).
func (o *Hub) ClientFor(out Output) (*client.Client, error) {
	if err := out.Check(); err != nil {
		return nil, err
	}
	return o.Client()
}

// Client returns a client of the hub with the token from the environment.
func (o *Hub) Client() (*client.Client, error) { return o.ClientWith(nil) }

// ClientWith is Client over hc (nil: the client's default).
func (o *Hub) ClientWith(hc *http.Client) (*client.Client, error) {
	if o.URL == "" {
		return nil, Usage(errors.New("--hub URL is required"))
	}
	token := os.Getenv(HubTokenEnv)
	if token == "" {
		return nil, Usagef("set %s to a hub token (the admin token, or a read-only one for reading)", HubTokenEnv)
	}
	c, err := client.New(o.URL, token, hc)
	if err != nil {
		return nil, Usage(err)
	}
	return c, nil
}
