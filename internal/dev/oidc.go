package dev

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/testutil/oidctest"
)

func newOIDCProviderCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "oidc-provider",
		Short: "A local OpenID Connect provider for demos and tests, and ID tokens from it",
		Example: "  fleetform-dev oidc-provider serve --client-id fleetform --client-secret s3cret --person 'pat@contoso.com=Pat:payments-devs'\n" +
			"  fleetform-dev oidc-provider token --issuer http://127.0.0.1:5556/oidc --client-id fleetform --client-secret s3cret --login pat@contoso.com",
	}
	cmd.AddCommand(newOIDCServeCmd(e), newOIDCTokenCmd(e))
	return cmd
}

type oidcServeOptions struct {
	opts   oidctest.Options
	people []string
}

func newOIDCServeCmd(e *env) *cobra.Command {
	var o oidcServeOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the provider until stopped: people sign in by their email as login_hint, without a password",
		Long: "serve runs an OpenID Connect provider (github.com/oauth2-proxy/mockoidc) with one client\n" +
			"and the people given: discovery, the authorization code flow with PKCE, ID tokens with\n" +
			"name, email and groups, JWKS. Nobody types a password: it is for demos and tests only.\n" +
			"It prints its issuer URL, then serves until SIGINT or SIGTERM.",
		Example: "  fleetform-dev oidc-provider serve --addr 127.0.0.1:5556 --client-id fleetform --client-secret s3cret --person 'pat@contoso.com=Pat:payments-devs' --person 'sam@contoso.com=Sam:platform-engineers'",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.opts.Addr, "addr", "127.0.0.1:0", "address to listen on (port 0: any free port)")
	f.StringVar(&o.opts.ClientID, "client-id", "fleetform", "the one client's ID")
	f.StringVar(&o.opts.ClientSecret, "client-secret", "", "the client's secret (default: random, printed)")
	f.StringArrayVar(&o.people, "person", nil, "who may sign in, EMAIL=NAME:GROUP,GROUP (repeatable; the first signs in without a login_hint)")
	return cmd
}

func (o *oidcServeOptions) validate() error {
	if len(o.people) == 0 {
		return command.Usagef("--person is required: EMAIL=NAME:GROUP,GROUP")
	}
	for _, p := range o.people {
		who, err := parsePerson(p)
		if err != nil {
			return command.Usage(err)
		}
		o.opts.People = append(o.opts.People, who)
	}
	return nil
}

// parsePerson reads EMAIL=NAME:GROUP,GROUP.
func parsePerson(s string) (oidctest.Person, error) {
	email, rest, ok := strings.Cut(s, "=")
	name, groups, _ := strings.Cut(rest, ":")
	if !ok || email == "" || name == "" {
		return oidctest.Person{}, fmt.Errorf("--person %q: want EMAIL=NAME:GROUP,GROUP", s)
	}
	who := oidctest.Person{Subject: email, Email: email, Name: name}
	if groups != "" {
		who.Groups = strings.Split(groups, ",")
	}
	return who, nil
}

func (o *oidcServeOptions) run(ctx context.Context, e *env) error {
	p, err := oidctest.StartWith(ctx, o.opts)
	if err != nil {
		return err
	}
	defer func() { _ = p.Close() }()
	fmt.Fprintf(e.Stdout, "issuer %s client-id %s client-secret %s\n", p.Issuer(), p.ClientID(), p.ClientSecret())
	<-ctx.Done()
	return nil
}

type oidcTokenOptions struct {
	issuer, clientID, clientSecret, login string
}

func newOIDCTokenCmd(e *env) *cobra.Command {
	var o oidcTokenOptions
	cmd := &cobra.Command{
		Use:     "token",
		Short:   "Sign a person in without a browser and print their ID token (what a CI job's token service gives it)",
		Example: "  fleetform-dev oidc-provider token --issuer http://127.0.0.1:5556/oidc --client-id fleetform --client-secret s3cret --login pat@contoso.com",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.issuer == "" || o.clientID == "" {
				return command.Usagef("--issuer and --client-id are required")
			}
			tok, err := oidctest.IDToken(cmd.Context(), o.issuer, o.clientID, o.clientSecret, o.login)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(e.Stdout, tok)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.issuer, "issuer", "", "the provider's issuer URL")
	f.StringVar(&o.clientID, "client-id", "fleetform", "the client's ID")
	f.StringVar(&o.clientSecret, "client-secret", "", "the client's secret")
	f.StringVar(&o.login, "login", "", "who signs in (their email)")
	return cmd
}
