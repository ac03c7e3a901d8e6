package controlplane_test

import (
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestCommonTipSkipsEnvironmentOnlyCommits: pins and other commits under environments/ do
// not make a new promotable commit in the folder layout.
func TestCommonTipSkipsEnvironmentOnlyCommits(t *testing.T) {
	t.Parallel()
	r := gittest.NewBare(t)
	files := map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		"workloads/a.yaml":          workloadDoc("a", "dev"),
	}
	c1 := r.Commit(t, "main", files)
	files["environments/dev/base-repo.yaml"] = baseRepoDoc(c1.String())
	r.Commit(t, "main", files)
	files["environments/dev/types.yaml"] = clusterTypeDoc("large")
	r.Commit(t, "main", files)
	if got := commonTip(t, r); got != c1.String() {
		t.Fatalf("CommonTip after two environment-only commits = %s, want %s", got, c1)
	}
	files["workloads/b.yaml"] = workloadDoc("b", "dev")
	c4 := r.Commit(t, "main", files)
	if got := commonTip(t, r); got != c4.String() {
		t.Fatalf("CommonTip after a common change = %s, want %s", got, c4)
	}
}

func commonTip(t *testing.T, r *gittest.Repo) string {
	t.Helper()
	cp, err := controlplane.Open(t.Context(), r.Dir, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := cp.CommonTip()
	if err != nil {
		t.Fatal(err)
	}
	return tip
}
