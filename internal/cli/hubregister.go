package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub/api"
)

type hubRegisterOptions struct {
	hub         hubOptions
	out         command.Output
	expires     expiresOption
	environment string
	clusterType string
	labels      []string
	rotate      bool
}

func newHubRegisterCmd(e *env) *cobra.Command {
	var o hubRegisterOptions
	cmd := &cobra.Command{
		Use: "register NAME",
		Example: "  FLEETFORM_HUB_TOKEN=... fleetform hub register edge-munich-1 --hub https://hub.example.com --env prod --cluster-type edge --label site=munich\n" +
			"  # a new token for a cluster that exists (the old one stops working)\n" +
			"  FLEETFORM_HUB_TOKEN=... fleetform hub register edge-munich-1 --hub https://hub.example.com --env prod --cluster-type edge --rotate",
		Short: "Register a cluster and print its token",
		Long: "register adds a cluster to the hub and prints the token its reporter posts with (shown\n" +
			"once: the hub keeps only its hash). --rotate issues a new token for a registered cluster;\n" +
			"the old one stops working. --expires-in makes the token stop working after that long.\n" +
			"Needs the admin token in " + command.HubTokenEnv + ".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.out.Check(); err != nil {
				return err
			}
			req, err := o.registration(args[0])
			if err != nil {
				return err
			}
			c, err := o.hub.Client()
			if err != nil {
				return err
			}
			tok, err := c.RegisterCluster(cmd.Context(), req, o.rotate)
			if err != nil {
				return err
			}
			return printToken(e, o.out, tok)
		},
	}
	o.hub.BindRequired(cmd)
	o.out.Bind(cmd)
	o.expires.bind(cmd, "the cluster's token")
	f := cmd.Flags()
	f.StringVar(&o.environment, "env", "", "environment of the cluster (required)")
	f.StringVar(&o.clusterType, "cluster-type", "", "cluster type of the cluster (required)")
	f.StringArrayVar(&o.labels, "label", nil, "label KEY=VALUE (repeatable)")
	f.BoolVar(&o.rotate, "rotate", false, "issue a new token for a registered cluster")
	_ = cmd.MarkFlagRequired("env")
	_ = cmd.MarkFlagRequired("cluster-type")
	return cmd
}

func (o *hubRegisterOptions) registration(name string) (api.ClusterRegistration, error) {
	expiresAt, err := o.expires.at()
	if err != nil {
		return api.ClusterRegistration{}, err
	}
	req := api.ClusterRegistration{Name: name, Environment: o.environment, ClusterType: o.clusterType, ExpiresAt: expiresAt}
	for _, l := range o.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return req, command.Usagef("--label %q: want KEY=VALUE", l)
		}
		if req.Labels == nil {
			req.Labels = map[string]string{}
		}
		req.Labels[k] = v
	}
	return req, nil
}
