package authoring

import (
	"fmt"
	"strings"
	"testing"
)

const (
	paymentsDT = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: DeploymentTarget\nmetadata:\n  name: pay-dev\n  labels: {workspace: payments}\nspec: {environment: dev}\n"
	billingReg = "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: WorkloadRegistration\nmetadata: {name: billing}\nspec:\n  workspace: billing\n  workload: {repo: r, branch: main, path: .}\n"
	platformCM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: platform\n  labels: {platform-config: \"true\"}\ndata: {REGION: east}\n"
)

// TestScopeIsWhatTheDocumentsTouch: a change is judged on the documents it adds, changes or
// removes, each belonging to its workspace or to the platform; a document left as it was
// (comments and layout aside) touches nothing.
func TestScopeIsWhatTheDocumentsTouch(t *testing.T) {
	cases := []struct {
		name     string
		old, now string
		want     string
	}{
		{"a team's new target", "", paymentsDT, "[payments] false"},
		{"a team's target removed", paymentsDT, "", "[payments] false"},
		{"a registration moved to another workspace", billingReg, replace(billingReg, "workspace: billing", "workspace: payments"), "[billing payments] false"},
		{"the platform's config", platformCM, replace(platformCM, "east", "west"), "[] true"},
		{"one document of a shared file", paymentsDT + "---\n" + platformCM, replace(paymentsDT, "dev}", "dev, manifests: {a: b}}") + "---\n" + platformCM, "[payments] false"},
		{"comments and layout only", paymentsDT, "# a comment\n" + replace(paymentsDT, "{workspace: payments}", "\n    workspace: payments"), "[] false"},
		{"a workload without a workspace is the platform's", "", "kind: Workload\nmetadata: {name: w}\nspec: {deploymentTargets: []}\n", "[] true"},
		{"a file that is not YAML", "", "a: [\n", "[] true"},
		{"a document without a kind", "", "a: b\n", "[] true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := Scope{Workspaces: []string{}}
			s.addFile([]byte(c.old), []byte(c.now))
			if got := fmt.Sprint(s.Workspaces, s.Platform); got != c.want {
				t.Errorf("scope %s, want %s", got, c.want)
			}
		})
	}
}

func replace(s, old, now string) string {
	if !strings.Contains(s, old) {
		panic("no " + old + " in " + s)
	}
	return strings.Replace(s, old, now, 1)
}
