// Package gitauth reads the git credentials fleetform takes from the environment:
// FLEETFORM_GIT_TOKEN, with FLEETFORM_GIT_USERNAME (default "git").
package gitauth

import (
	"encoding/base64"
	"os"
)

// FromEnv returns the user and token from the environment; ok is false when no token is set.
func FromEnv() (user, token string, ok bool) {
	token = os.Getenv("FLEETFORM_GIT_TOKEN")
	if token == "" {
		return "", "", false
	}
	user = os.Getenv("FLEETFORM_GIT_USERNAME")
	if user == "" {
		user = "git"
	}
	return user, token, true
}

// HeaderEnv returns the environment entries that make the git command send the credentials
// as an HTTP Basic Authorization header (so the token is never on a command line), or nil
// when no token is set.
func HeaderEnv() []string {
	user, token, ok := FromEnv()
	if !ok {
		return nil
	}
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + token))
	return []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + auth}
}
