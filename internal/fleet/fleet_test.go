package fleet_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/fleet"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// environment is an Environment document; extra adds to its spec.
func environment(name, extra string) string {
	return "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: " + name + "}\n" +
		"spec:\n  controlPlane: {repo: https://example.com/cp, branch: main, path: .}\n" + extra
}

// twoEnvironments is a control plane of dev and stage (promoted from dev), with no GitOps
// repository and nothing scheduled.
func twoEnvironments(t *testing.T) *fleet.Fleet {
	t.Helper()
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{
		"environments/dev/env.yaml":   environment("dev", ""),
		"environments/stage/env.yaml": environment("stage", "  promotion: {from: dev}\n"),
	})
	return fleet.New(fleet.Config{ControlPlane: r.Dir, CacheDir: t.TempDir()})
}

// TestOutcomes: each use case ends in the outcome its callers map (an exit code, an HTTP
// status): a request that cannot be answered as asked is a UsageError, a gate's refusal a
// RefusedError with its result, input with errors an InvalidError with its result.
func TestOutcomes(t *testing.T) {
	f := twoEnvironments(t)
	ctx := t.Context()

	_, err := f.Schedule(ctx, "")
	if !fleet.IsUsage(err) || !strings.Contains(err.Error(), "--env is required: the control plane declares dev, stage") {
		t.Errorf("schedule of one of two environments, none named: %v, want a UsageError naming both", err)
	}
	doc, err := f.Schedule(ctx, "dev")
	if err != nil || doc.Environment != "dev" || len(doc.Assignments) != 0 {
		t.Errorf("schedule dev: %+v, %v", doc, err)
	}
	_, err = f.Plan(ctx, fleet.PlanRequest{Env: "dev"})
	if !fleet.IsUsage(err) || !strings.Contains(err.Error(), "environment dev has no GitOpsRepo") {
		t.Errorf("plan without a GitOps repository: %v, want a UsageError", err)
	}

	res, err := f.Promote(ctx, fleet.PromoteRequest{To: "stage", Now: time.Now()})
	var refused *fleet.RefusedError
	if !errors.As(err, &refused) || res == nil || res.Promoted || len(refused.Reasons) == 0 ||
		strings.Join(refused.Reasons, "\n") != strings.Join(res.Reasons, "\n") {
		t.Errorf("promotion without a hub: %+v, %v; want a RefusedError with the result's reasons", res, err)
	}
	if _, err := f.Promote(ctx, fleet.PromoteRequest{To: "prod", Now: time.Now()}); err == nil || fleet.IsRefused(err) {
		t.Errorf("promotion into an undeclared environment: %v, want an error, not a refusal", err)
	}
}

// TestValidateInvalid: a control plane with errors is an InvalidError along with the
// validation that locates them; each environment is still validated.
func TestValidateInvalid(t *testing.T) {
	r := gittest.NewBare(t)
	r.Commit(t, "main", map[string]string{
		"environments/dev/env.yaml":  environment("dev", ""),
		"environments/dev/bad.yaml":  "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: ClusterType\nmetadata: {name: edge}\nspec: {reconsiler: x}\n",
		"environments/prod/env.yaml": environment("prod", ""),
	})
	f := fleet.New(fleet.Config{ControlPlane: r.Dir})
	v, err := f.Validate(t.Context(), "")
	var invalid *fleet.InvalidError
	if !errors.As(err, &invalid) || invalid.Errors < 1 || v == nil || v.Valid || len(v.Environments) != 2 {
		t.Fatalf("validate: %+v, %v; want an InvalidError with both environments' validation", v, err)
	}
	if !controlplane.HasErrors(v.Diagnostics) || !strings.Contains(v.Diagnostics[0].Error(), "bad.yaml") {
		t.Errorf("diagnostics %v do not locate the error", v.Diagnostics)
	}
}

// TestConfigDefaults: a Fleet signs as fleetform unless told otherwise.
func TestConfigDefaults(t *testing.T) {
	if got := fleet.New(fleet.Config{}).Config().Author; got != fleet.DefaultAuthor {
		t.Errorf("author %+v, want %+v", got, fleet.DefaultAuthor)
	}
	a := fleet.Author{Name: "Ada", Email: "ada@example.com"}
	if got := fleet.New(fleet.Config{Author: a}).Config().Author; got != a {
		t.Errorf("author %+v, want %+v", got, a)
	}
}

// TestEnvironmentChoice: with no environment named, apply works on the only one declared; a
// control plane that declares none says how to start one; one that declares several asks
// for one (a UsageError). Each error comes before anything is written.
func TestEnvironmentChoice(t *testing.T) {
	ctx := t.Context()
	none := gittest.NewBare(t)
	none.Commit(t, "main", map[string]string{"README.md": "nothing declared\n"})
	_, err := fleet.New(fleet.Config{ControlPlane: none.Dir, CacheDir: t.TempDir()}).Apply(ctx, fleet.ApplyRequest{})
	if !errors.Is(err, controlplane.ErrNoEnvironment) || fleet.IsUsage(err) {
		t.Errorf("apply with no environment declared: %v, want ErrNoEnvironment", err)
	}

	_, err = twoEnvironments(t).Apply(ctx, fleet.ApplyRequest{})
	if !fleet.IsUsage(err) || err.Error() != "--env is required: the control plane declares dev, stage" {
		t.Errorf("apply of one of two environments, none named: %v, want a UsageError naming both", err)
	}

	one := gittest.NewBare(t)
	one.Commit(t, "main", map[string]string{"environments/dev/env.yaml": environment("dev", "")})
	_, err = fleet.New(fleet.Config{ControlPlane: one.Dir, CacheDir: t.TempDir()}).Apply(ctx, fleet.ApplyRequest{})
	if !fleet.IsUsage(err) || !strings.Contains(err.Error(), "environment dev has no GitOpsRepo") {
		t.Errorf("apply of the only environment, unnamed: %v, want it chosen (and refused for want of a GitOps repository)", err)
	}
}
