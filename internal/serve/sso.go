package serve

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/identity"
)

// Environment variables of the secrets SSO needs.
const (
	// OIDCClientSecretEnv is fleetform's client secret at the identity provider.
	OIDCClientSecretEnv = "FLEETFORM_OIDC_CLIENT_SECRET" //nolint:gosec // the variable's name, not a secret
	// SessionSecretEnv seals a web UI sign-in under way; replicas share it (without it, a
	// random key: a sign-in then finishes only on the replica that started it).
	SessionSecretEnv = "FLEETFORM_SESSION_SECRET" //nolint:gosec // the variable's name, not a secret
)

// SSO is how people and CI jobs sign in: the --oidc-* flags.
type SSO struct {
	// Issuer, ClientID, ClientSecret, GroupsClaim, Scopes and ExternalURL set up sign-in to
	// the web UI through the provider (identity.Config).
	Issuer, ClientID, ClientSecret, GroupsClaim, ExternalURL string
	Scopes                                                   []string
	// Trusted are further issuers of bearer tokens, each ISSUER=AUDIENCE.
	Trusted []string
	// DisableTokenSignIn hides and refuses the UI's sign-in with a hub token.
	DisableTokenSignIn bool
	// SessionSecret seals the UI's sign-ins under way (SessionSecretEnv).
	SessionSecret string
}

// Check says what is wrong with the flags.
func (s SSO) Check() error {
	_, err := s.config()
	return err
}

func (s SSO) config() (identity.Config, error) {
	cfg := identity.Config{Issuer: s.Issuer, ClientID: s.ClientID, ClientSecret: s.ClientSecret, GroupsClaim: s.GroupsClaim,
		Scopes: s.Scopes, ExternalURL: s.ExternalURL, HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	for _, t := range s.Trusted {
		tr, err := identity.ParseTrust(t)
		if err != nil {
			return cfg, fleet.Usagef("--oidc-trusted-issuer %w", err)
		}
		cfg.Trusted = append(cfg.Trusted, tr)
	}
	if err := cfg.Check(); err != nil {
		return cfg, fleet.Usage(err)
	}
	if s.DisableTokenSignIn && !cfg.SignInEnabled() {
		return cfg, fleet.Usage(errors.New("--disable-token-sign-in needs --oidc-issuer: the UI would have no way to sign in"))
	}
	return cfg, nil
}

// signIn is what the SSO configuration gives the hub (people's bearer tokens) and the UI
// (sign-in and sessions); nil parts are not configured.
type signIn struct {
	verifier *identity.Verifier
	signIn   *identity.SignIn
	sealer   *identity.Sealer
}

func (s SSO) start(logger *slog.Logger) (signIn, error) {
	cfg, err := s.config()
	if err != nil || !cfg.Enabled() {
		return signIn{}, err
	}
	out := signIn{verifier: identity.NewVerifier(cfg)}
	if cfg.SignInEnabled() {
		if s.SessionSecret == "" {
			logger.Warn("sign-ins are sealed with a random key: one started on this replica cannot finish on another, nor after a restart; set " + SessionSecretEnv)
		}
		out.signIn, out.sealer = identity.NewSignIn(cfg), identity.NewSealer(s.SessionSecret)
	}
	return out, nil
}
