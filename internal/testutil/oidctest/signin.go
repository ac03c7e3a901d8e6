package oidctest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// IDToken signs login in at the provider of issuer without a browser (the authorization
// code flow with PKCE, following the provider's redirect by hand) and returns the ID token:
// what a CI job gets from its platform's token service.
func IDToken(ctx context.Context, issuer, clientID, clientSecret, login string) (string, error) {
	prov, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		return "", err
	}
	const redirect = "http://127.0.0.1/callback" // never reached: the code is read off the redirect
	oc := oauth2.Config{ClientID: clientID, ClientSecret: clientSecret, Endpoint: prov.Endpoint(), RedirectURL: redirect,
		Scopes: []string{oidc.ScopeOpenID, "profile", "email", "groups"}}
	verifier := oauth2.GenerateVerifier()
	authURL := oc.AuthCodeURL("state", oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("login_hint", login))
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	_ = resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		return "", fmt.Errorf("the provider did not sign %s in: %s", login, resp.Status)
	}
	tok, err := oc.Exchange(ctx, loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		return "", err
	}
	raw, ok := tok.Extra("id_token").(string)
	if !ok {
		return "", errors.New("the provider sent no ID token")
	}
	return raw, nil
}
