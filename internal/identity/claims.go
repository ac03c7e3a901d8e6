package identity

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/fleetform/fleetform/internal/access"
)

// Bounds on what an identity keeps of a token: the session is a cookie, and claims end up
// in the history.
const (
	// MaxGroups is how many groups an identity keeps (sorted; the rest are dropped). A
	// provider that sends more (Entra ID's "groups overage") should send only the groups
	// assigned to fleetform's application.
	MaxGroups = 100
	maxClaims = 64
	maxValue  = 512
)

// registered are the claims every token has; they are not offered to access policies.
var registered = []string{"iss", "sub", "aud", "exp", "iat", "nbf", "jti", "nonce", "at_hash", "c_hash", "auth_time", "azp", "sid"}

// fromToken is who a verified token speaks for.
func fromToken(tok *oidc.IDToken, groupsClaim string) (access.Identity, error) {
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return access.Identity{}, fmt.Errorf("the token's claims: %w", err)
	}
	id := access.Identity{Issuer: tok.Issuer, Subject: tok.Subject}
	id.Name = firstString(claims, "name", "preferred_username")
	if !unverified(claims["email_verified"]) {
		id.Email = firstString(claims, "email") // else a claim only: user subjects name verified emails
	}
	id.Groups = groups(claims[groupsClaim])
	id.Claims = stringClaims(claims, groupsClaim)
	if id.Subject == "" {
		return access.Identity{}, fmt.Errorf("the token from %s has no subject", tok.Issuer)
	}
	return id, nil
}

// unverified reports whether an email_verified claim says no (false, or "false" as some
// providers send it); a provider that sends none vouches for its emails.
func unverified(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return strings.EqualFold(x, "false")
	}
	return false
}

func firstString(claims map[string]any, names ...string) string {
	for _, n := range names {
		if s, ok := claims[n].(string); ok && s != "" {
			return clipValue(s)
		}
	}
	return ""
}

// groups reads a groups claim: a list of strings, or one string.
func groups(v any) []string {
	var out []string
	switch g := v.(type) {
	case string:
		out = []string{g}
	case []any:
		for _, e := range g {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, clipValue(s))
			}
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), MaxGroups)]
}

// stringClaims are the token's other claims whose values are strings, booleans or numbers
// (repository, ref, environment, ...), as strings.
func stringClaims(claims map[string]any, groupsClaim string) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(claims)) {
		v := claims[k]
		if k == groupsClaim || slices.Contains(registered, k) || len(out) >= maxClaims {
			continue
		}
		switch x := v.(type) {
		case string:
			out[k] = clipValue(x)
		case bool:
			out[k] = strconv.FormatBool(x)
		case float64:
			out[k] = strconv.FormatFloat(x, 'f', -1, 64)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func clipValue(s string) string {
	if len(s) > maxValue {
		return s[:maxValue]
	}
	return s
}
