// Package identity tells who a request comes from when it is not a hub token: a person
// signed in to the web UI through the company's OpenID Connect provider (the authorization
// code flow with PKCE), or a program such as a CI job that sends its own short-lived OIDC
// token as the bearer.
//
// Tokens are verified by go-oidc: issuer, audience, expiry and signature, with each
// provider's keys fetched from its JWKS and fetched again when it rotates them. The web UI's
// session is a cookie sealed with an HMAC key (Sealer), so every replica reads it.
package identity
