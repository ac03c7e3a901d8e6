package cli

import (
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/serve"
)

// ssoOptions are the --oidc-* flags of serve and hub serve.
type ssoOptions struct {
	issuer, clientID, secretFile, groupsClaim, externalURL string
	scopes, trusted                                        []string
	disableTokenSignIn                                     bool
}

// ssoConfig is the config file's oidc section (of serve: and hub:): what the flags set.
type ssoConfig struct {
	Issuer             string   `json:"issuer,omitempty"`
	ClientID           string   `json:"clientID,omitempty"`
	ClientSecretFile   string   `json:"clientSecretFile,omitempty"`
	GroupsClaim        string   `json:"groupsClaim,omitempty"`
	Scopes             []string `json:"scopes,omitempty"`
	ExternalURL        string   `json:"externalURL,omitempty"`
	TrustedIssuers     []string `json:"trustedIssuers,omitempty"`
	DisableTokenSignIn bool     `json:"disableTokenSignIn,omitempty"`
}

func (o *ssoOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.issuer, "oidc-issuer", "", "sign people in to the web UI through this OpenID Connect provider (its issuer URL)")
	f.StringVar(&o.clientID, "oidc-client-id", "", "fleetform's client ID at the provider (its secret: "+serve.OIDCClientSecretEnv+" or --oidc-client-secret-file)")
	f.StringVar(&o.secretFile, "oidc-client-secret-file", "", "file holding the client secret (none: a public client, PKCE only)")
	f.StringVar(&o.groupsClaim, "oidc-groups-claim", "groups", "the ID token's claim that lists a person's groups")
	f.StringSliceVar(&o.scopes, "oidc-scopes", []string{"openid", "profile", "email", "groups"}, "scopes asked for at sign-in")
	f.StringVar(&o.externalURL, "external-url", "", "where browsers reach fleetform (default: the address served); the provider's redirect URI is this followed by /auth/callback")
	f.StringArrayVar(&o.trusted, "oidc-trusted-issuer", nil, "also accept bearer JWTs of this issuer for this audience, ISSUER=AUDIENCE (repeatable; CI jobs)")
	f.BoolVar(&o.disableTokenSignIn, "disable-token-sign-in", false, "the web UI offers single sign-on only (hub tokens still work on the API)")
}

// fromConfig takes from the config file what no flag set.
func (o *ssoOptions) fromConfig(cmd *cobra.Command, c ssoConfig) {
	set := func(flag string, apply func()) {
		if !cmd.Flags().Changed(flag) {
			apply()
		}
	}
	set("oidc-issuer", func() { o.issuer = orString(c.Issuer, o.issuer) })
	set("oidc-client-id", func() { o.clientID = orString(c.ClientID, o.clientID) })
	set("oidc-client-secret-file", func() { o.secretFile = orString(c.ClientSecretFile, o.secretFile) })
	set("oidc-groups-claim", func() { o.groupsClaim = orString(c.GroupsClaim, o.groupsClaim) })
	set("external-url", func() { o.externalURL = orString(c.ExternalURL, o.externalURL) })
	set("oidc-scopes", func() {
		if len(c.Scopes) > 0 {
			o.scopes = c.Scopes
		}
	})
	set("oidc-trusted-issuer", func() { o.trusted = append(o.trusted, c.TrustedIssuers...) })
	set("disable-token-sign-in", func() { o.disableTokenSignIn = o.disableTokenSignIn || c.DisableTokenSignIn })
}

// config reads the secrets (the environment, the secret file) and checks the whole.
func (o *ssoOptions) config() (serve.SSO, error) {
	s := serve.SSO{Issuer: o.issuer, ClientID: o.clientID, GroupsClaim: o.groupsClaim, Scopes: o.scopes, ExternalURL: o.externalURL,
		Trusted: o.trusted, DisableTokenSignIn: o.disableTokenSignIn, ClientSecret: os.Getenv(serve.OIDCClientSecretEnv),
		SessionSecret: os.Getenv(serve.SessionSecretEnv)}
	if o.secretFile != "" {
		b, err := os.ReadFile(o.secretFile)
		if err != nil {
			return s, command.Usagef("--oidc-client-secret-file: %v", err)
		}
		s.ClientSecret = strings.TrimSpace(string(b))
	}
	if err := s.Check(); err != nil {
		return s, err
	}
	return s, nil
}
