package gitauth

import (
	"encoding/base64"
	"strconv"
	"strings"
)

// GitEnv returns env with the git configuration that makes the git command send c to
// remote, and to nothing else: an Authorization header (HTTP Basic) in
// http.<remote>.extraHeader, which git applies only to that URL, and
// http.<remote>.followRedirects=false, because git would send the header to the host a
// redirect points at. The entries go through GIT_CONFIG_COUNT/KEY/VALUE, after any the
// environment already has, so the secret is never on a command line. env is returned as is
// when c is nil.
func GitEnv(env []string, remote string, c *Credential) []string {
	if c == nil {
		return env
	}
	auth := base64.StdEncoding.EncodeToString([]byte(c.Username + ":" + c.Password))
	return appendGitConfig(env,
		"http."+remote+".extraHeader", "Authorization: Basic "+auth,
		"http."+remote+".followRedirects", "false")
}

// appendGitConfig adds key/value pairs to the GIT_CONFIG_COUNT entries of env.
func appendGitConfig(env []string, kv ...string) []string {
	n := 0
	out := make([]string, 0, len(env)+len(kv)+1)
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "GIT_CONFIG_COUNT="); ok {
			if c, err := strconv.Atoi(v); err == nil && c > 0 {
				n = c
			}
			continue
		}
		out = append(out, e)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		k := strconv.Itoa(n + i/2)
		out = append(out, "GIT_CONFIG_KEY_"+k+"="+kv[i], "GIT_CONFIG_VALUE_"+k+"="+kv[i+1])
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n+len(kv)/2))
}
