package controlplane_test

import (
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
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

// TestAccessPoliciesAtTheTip: a change of the control plane is judged by the policies at the
// tip of the common part, while an environment pinned to an older commit holds the
// policies promoted into it.
func TestAccessPoliciesAtTheTip(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	files := map[string]string{"environments/dev/env.yaml": envDoc("dev")}
	c1 := r.Commit(t, "main", files)
	files["environments/dev/base-repo.yaml"] = baseRepoDoc(c1.String())
	files["access/teams.yaml"] = accessPolicyDoc
	files["access/broken.yaml"] = "apiVersion: fleetform.io/v1alpha1\nkind: AccessPolicy\nmetadata: {name: broken}\nspec: {rolez: []}\n"
	files["environments/dev/access.yaml"] = "apiVersion: fleetform.io/v1alpha1\nkind: AccessPolicy\nmetadata: {name: env}\nspec: {roles: []}\n"
	r.Commit(t, "main", files)
	cp, err := controlplane.Open(t.Context(), r.Dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tip, diags, err := cp.AccessPolicies(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(tip) != 1 || tip[0].Metadata.Name != "teams" || tip[0].Source.File != "access/teams.yaml" {
		t.Errorf("policies at the tip = %v, want teams from access/teams.yaml", tip)
	}
	checkDiags(t, diags, want{file: "access/broken.yaml", line: 4, has: []string{"rolez"}})
	dev, err := cp.Load(t.Context(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	if len(dev.AccessPolicies) != 0 {
		t.Errorf("dev, pinned before the policy, holds %d policies", len(dev.AccessPolicies))
	}
}
