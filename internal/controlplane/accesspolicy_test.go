package controlplane_test

import (
	"testing"
)

const accessPolicyDoc = `apiVersion: fleetform.io/v1alpha1
kind: AccessPolicy
metadata: {name: teams}
spec:
  roles:
    - name: payments
      subjects: [{group: payments-devs}]
      allow: [{action: author, workspaces: [payments]}]
`

// TestAccessPolicyIsReadFromTheCommonPart: a policy in the common part is loaded, one in an
// environment's own folder is refused where it stands.
func TestAccessPolicyIsReadFromTheCommonPart(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		"access/teams.yaml":            accessPolicyDoc,
		"environments/dev/access.yaml": "apiVersion: fleetform.io/v1alpha1\nkind: AccessPolicy\nmetadata: {name: mine}\nspec: {roles: []}\n",
	})
	checkLoaded(t, snap, "AccessPolicy/teams")
	checkDiags(t, snap.Diagnostics, want{file: "environments/dev/access.yaml", line: 2,
		has: []string{`AccessPolicy "mine" is ignored: access policies are read from the common part only`}})
}

// TestMalformedAccessPolicyGrantsNothing: a policy with one wrong rule is left out whole,
// with a located error.
func TestMalformedAccessPolicyGrantsNothing(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		"access/teams.yaml": accessPolicyDoc + "    - name: ops\n      subjects: [{group: ops}]\n      allow: [{action: promote}]\n",
	})
	checkLoaded(t, snap)
	checkDiags(t, snap.Diagnostics, want{file: "access/teams.yaml", line: 11,
		has: []string{"spec.roles[1].allow[0].environments: promote needs environments; the whole policy is left out"}})
}

// TestAccessPolicyKnowsItsAPIVersion: the kind is fleetform's own, and says so.
func TestAccessPolicyKnowsItsAPIVersion(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{"access/teams.yaml": kindDoc("AccessPolicy", "teams", "spec: {roles: []}\n")})
	checkLoaded(t, snap)
	checkDiags(t, snap.Diagnostics, want{file: "access/teams.yaml", line: 1,
		has: []string{"kind AccessPolicy has apiVersion fleetform.io/v1alpha1", "set apiVersion: fleetform.io/v1alpha1"}})
}
