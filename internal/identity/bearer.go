package identity

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/fleetform/fleetform/internal/access"
)

// ErrUnknownIssuer means a token comes from an issuer fleetform does not trust.
var ErrUnknownIssuer = errors.New("the token's issuer is not trusted: trust it with --oidc-trusted-issuer ISSUER=AUDIENCE")

// signingAlgorithms are the algorithms a token may be signed with (not "none", not HMAC).
var signingAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512, jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

// Verifier checks bearer tokens (JWTs) from the trusted issuers: the sign-in provider's
// for its client ID, and each further trusted issuer's for its audience.
type Verifier struct {
	cfg     Config
	trusted map[string]string // issuer → audience
	mu      sync.Mutex
	byIss   map[string]*oidc.IDTokenVerifier
	// failed is when each issuer's discovery last failed: it is not tried again for
	// discoveryBackoff, so that tokens naming an unreachable issuer cost nothing.
	failed map[string]time.Time
	now    func() time.Time
}

// discoveryBackoff is how long an issuer whose discovery failed is not asked again.
const discoveryBackoff = 30 * time.Second

// NewVerifier returns a Verifier for cfg's issuers. A provider's discovery document is read
// when its first token arrives (and read again after a failure).
func NewVerifier(cfg Config) *Verifier {
	v := &Verifier{cfg: cfg, trusted: map[string]string{}, byIss: map[string]*oidc.IDTokenVerifier{}, failed: map[string]time.Time{}, now: time.Now}
	if cfg.Issuer != "" {
		v.trusted[cfg.Issuer] = cfg.ClientID
	}
	for _, t := range cfg.Trusted {
		v.trusted[t.Issuer] = t.Audience
	}
	return v
}

// Verify checks raw (signature, issuer, audience, expiry) and returns who it speaks for.
func (v *Verifier) Verify(ctx context.Context, raw string) (access.Identity, error) {
	issuer, err := unverifiedIssuer(raw)
	if err != nil {
		return access.Identity{}, err
	}
	ver, err := v.verifier(ctx, issuer)
	if err != nil {
		return access.Identity{}, err
	}
	tok, err := ver.Verify(ctx, raw)
	if err != nil {
		return access.Identity{}, fmt.Errorf("the token from %s: %w", issuer, err)
	}
	id, err := fromToken(tok, v.cfg.groupsClaim())
	if err != nil || issuer == v.cfg.Issuer {
		return id, err
	}
	// A further trusted issuer (a CI platform's, shared by all its users) vouches for a job,
	// not for a person of the company: its token's name, email and groups stay claims, and
	// the identity is a job's, so that group and user subjects match only people of the
	// sign-in provider.
	id.Name, id.Email, id.Groups, id.Job = "", "", nil, true
	return id, nil
}

// unverifiedIssuer reads the issuer a token claims, to know whose keys check it.
func unverifiedIssuer(raw string) (string, error) {
	sig, err := jose.ParseSignedCompact(raw, signingAlgorithms)
	if err != nil {
		return "", fmt.Errorf("the bearer is not a signed JWT: %w", err)
	}
	var claims struct {
		Issuer string `json:"iss"`
	}
	if err := json.Unmarshal(sig.UnsafePayloadWithoutVerification(), &claims); err != nil || claims.Issuer == "" {
		return "", errors.New("the bearer JWT names no issuer")
	}
	return claims.Issuer, nil
}

// verifier returns the verifier of a trusted issuer, discovering it on first use.
func (v *Verifier) verifier(ctx context.Context, issuer string) (*oidc.IDTokenVerifier, error) {
	audience, ok := v.trusted[issuer]
	if !ok {
		return nil, fmt.Errorf("%s: %w", issuer, ErrUnknownIssuer)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if ver := v.byIss[issuer]; ver != nil {
		return ver, nil
	}
	if at, ok := v.failed[issuer]; ok && v.now().Sub(at) < discoveryBackoff {
		return nil, fmt.Errorf("the identity provider %s could not be read a moment ago: try again shortly", issuer)
	}
	p, err := discover(ctx, v.cfg, issuer)
	if err != nil {
		v.failed[issuer] = v.now()
		return nil, err
	}
	ver := p.VerifierContext(v.keysContext(), &oidc.Config{ClientID: audience, SupportedSigningAlgs: algorithmNames()}) //nolint:contextcheck // the key set outlives this request
	v.byIss[issuer] = ver
	return ver, nil
}

// keysContext is the context the providers' key sets fetch with: it outlives the request
// that first needed the keys.
func (v *Verifier) keysContext() context.Context {
	return oidc.ClientContext(context.Background(), v.cfg.httpClient())
}

// discover reads an issuer's discovery document.
func discover(ctx context.Context, cfg Config, issuer string) (*oidc.Provider, error) {
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, cfg.httpClient()), issuer)
	if err != nil {
		return nil, fmt.Errorf("the identity provider %s could not be read: %w", issuer, err)
	}
	return p, nil
}

func algorithmNames() []string {
	out := make([]string, len(signingAlgorithms))
	for i, a := range signingAlgorithms {
		out[i] = string(a)
	}
	return out
}
