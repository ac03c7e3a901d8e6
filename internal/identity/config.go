package identity

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Defaults of Config.
const (
	DefaultGroupsClaim = "groups"
	// CallbackPath is where the provider sends the browser back: the redirect URI is the
	// external URL followed by this path.
	CallbackPath = "/auth/callback"
)

// DefaultScopes are the scopes asked for when Config.Scopes is empty.
func DefaultScopes() []string { return []string{"openid", "profile", "email", "groups"} }

// Config is how fleetform trusts identity providers.
type Config struct {
	// Issuer is the provider people sign in with ("" disables sign-in with OIDC).
	Issuer string
	// ClientID is fleetform's client at the provider; it is also the audience of the bearer
	// tokens the provider issues for fleetform.
	ClientID string
	// ClientSecret is the client's secret ("" for a public client: PKCE alone).
	ClientSecret string
	// GroupsClaim is the claim that lists a person's groups (default "groups").
	GroupsClaim string
	// Scopes are asked for at sign-in (default DefaultScopes).
	Scopes []string
	// ExternalURL is where browsers reach fleetform: the redirect URI is ExternalURL +
	// CallbackPath ("": the address served, SignIn.DefaultExternalURL).
	ExternalURL string
	// Trusted are further issuers whose tokens the API accepts as bearers (CI jobs).
	Trusted []Trust
	// HTTPClient reaches the providers (default http.DefaultClient).
	HTTPClient *http.Client
}

// Trust is an issuer whose tokens are accepted for one audience.
type Trust struct {
	Issuer   string
	Audience string
}

// ParseTrust reads ISSUER=AUDIENCE.
func ParseTrust(s string) (Trust, error) {
	issuer, audience, ok := strings.Cut(s, "=")
	t := Trust{Issuer: strings.TrimSpace(issuer), Audience: strings.TrimSpace(audience)}
	if !ok || t.Issuer == "" || t.Audience == "" {
		return Trust{}, fmt.Errorf("%q: want ISSUER=AUDIENCE (https://token.actions.githubusercontent.com=fleetform)", s)
	}
	if err := checkIssuer(t.Issuer); err != nil {
		return Trust{}, err
	}
	return t, nil
}

// SignInEnabled reports whether people sign in through an identity provider.
func (c Config) SignInEnabled() bool { return c.Issuer != "" }

// Enabled reports whether any identity provider is trusted.
func (c Config) Enabled() bool { return c.Issuer != "" || len(c.Trusted) > 0 }

// Check says what is wrong with the configuration, naming the flags.
func (c Config) Check() error {
	if c.Issuer == "" {
		if c.ClientID != "" || c.ExternalURL != "" {
			return errors.New("--oidc-client-id and --external-url need --oidc-issuer")
		}
		return nil
	}
	if err := checkIssuer(c.Issuer); err != nil {
		return fmt.Errorf("--oidc-issuer: %w", err)
	}
	if c.ClientID == "" {
		return errors.New("--oidc-issuer needs --oidc-client-id (fleetform's client at the provider)")
	}
	if c.ExternalURL == "" {
		return nil // the address served (SignIn.DefaultExternalURL)
	}
	u, err := url.Parse(c.ExternalURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" {
		return fmt.Errorf("--external-url %q: want where browsers reach fleetform (https://fleetform.example.com): the redirect URI is that followed by %s", c.ExternalURL, CallbackPath)
	}
	return nil
}

// RedirectURL is the redirect URI registered at the provider.
func (c Config) RedirectURL() string { return strings.TrimRight(c.ExternalURL, "/") + CallbackPath }

func (c Config) groupsClaim() string {
	if c.GroupsClaim == "" {
		return DefaultGroupsClaim
	}
	return c.GroupsClaim
}

func (c Config) scopes() []string {
	if len(c.Scopes) == 0 {
		return DefaultScopes()
	}
	return c.Scopes
}

func (c Config) httpClient() *http.Client {
	if c.HTTPClient == nil {
		return http.DefaultClient
	}
	return c.HTTPClient
}

func checkIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("issuer %q: want the provider's issuer URL (https://login.example.com/realms/x), as its discovery document names it", issuer)
	}
	return nil
}
