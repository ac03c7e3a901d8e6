package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// digestAsStored is how the digests kept with every cluster were computed: reportDigest must
// give the same for the same report, or every cluster's next heartbeat would count as a
// change.
func digestAsStored(r Report) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", r.Revision, r.Status, r.Message, r.GitOpsPath)
	deps := slices.Clone(r.Deployments)
	slices.SortFunc(deps, func(a, b DeploymentReport) int { return strings.Compare(a.DeploymentTarget, b.DeploymentTarget) })
	for _, d := range deps {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00", d.DeploymentTarget, d.Namespace, d.Status, d.Revision)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func TestReportDigestAsStored(t *testing.T) {
	reports := []Report{
		{},
		{Revision: "abc", Status: Compliant},
		{Revision: "abc", Status: NonCompliant, Message: "x\x00y", GitOpsPath: "dev/ct"},
		{Revision: "r", Status: Progressing, Deployments: []DeploymentReport{
			{DeploymentTarget: "web", Namespace: "shop", Status: Ready, Revision: "v1"},
			{DeploymentTarget: "api", Namespace: "shop", Status: Failed, Revision: "v2"},
		}},
	}
	for i, r := range reports {
		if got, want := reportDigest(r), digestAsStored(r); got != want {
			t.Errorf("report %d: digest %s, want %s as stored", i, got, want)
		}
	}
	unsorted := reports[3].Deployments
	if unsorted[0].DeploymentTarget != "web" {
		t.Errorf("reportDigest reordered the report's deployments: %+v", unsorted)
	}
}

func FuzzReportDigestAsStored(f *testing.F) {
	f.Add("abc", "msg", "path", "web", "shop", "api", "v1")
	f.Fuzz(func(t *testing.T, rev, msg, path, dt1, ns, dt2, drev string) {
		r := Report{Revision: rev, Status: Compliant, Message: msg, GitOpsPath: path, Deployments: []DeploymentReport{
			{DeploymentTarget: dt1, Namespace: ns, Status: Ready, Revision: drev},
			{DeploymentTarget: dt2, Namespace: ns, Status: Failed, Revision: drev},
		}}
		if got, want := reportDigest(r), digestAsStored(r); got != want {
			t.Errorf("digest %s, want %s as stored", got, want)
		}
	})
}
