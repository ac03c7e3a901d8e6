package host

import (
	"os"
	"strings"
)

// childEnv is the environment the agent runs ansible-playbook and git with: its own, without
// fleetform's secrets (every FLEETFORM_ variable, among them the agent's hub token and
// FLEETFORM_GIT_TOKEN, and the forge tokens GITHUB_TOKEN and GH_TOKEN), plus extra. A
// playbook comes from the GitOps repository: what it can read, it can print into a failure
// the agent reports to the hub.
func childEnv(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "FLEETFORM_") || name == "GITHUB_TOKEN" || name == "GH_TOKEN" {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}
