package schedule

import (
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// namespaceCases are environment, cluster-type and deployment-target names that take each
// of Namespace's ways: valid as they are, sanitized, too long, ending in '-'.
var namespaceCases = [][3]string{
	{"dev", "east", "shop-api"},
	{"dev", "east", "Shop.API"},
	{"dev", "east-", "api"},
	{"dev", "east", "api-"},
	{"dev", "east", "-api"},
	{"", "east", "api"},
	{"dev", "East", "api"},
	{"dev", "east", strings.Repeat("a", 60)},
	{"dev", "east", strings.Repeat("a", 63-len("dev-east-"))},
	{"dev", "east", strings.Repeat("a", 64-len("dev-east-"))},
	{"dev", strings.Repeat("c", 70), "api"},
	{"dev", "east", ""},
}

// TestSetNamespaces: the namespaces made for a cluster type's assignments at once are
// those Namespace makes for each.
func TestSetNamespaces(t *testing.T) {
	byType := map[[2]string][]Assignment{}
	for _, c := range namespaceCases {
		k := [2]string{c[0], c[1]}
		byType[k] = append(byType[k], Assignment{DeploymentTarget: c[2]}, Assignment{DeploymentTarget: c[2] + "x"})
	}
	for k, as := range byType {
		setNamespaces(as, k[0], k[1])
		for _, a := range as {
			if want := Namespace(k[0], k[1], a.DeploymentTarget); a.Namespace != want {
				t.Errorf("env %q, cluster type %q, target %q: %q, want %q", k[0], k[1], a.DeploymentTarget, a.Namespace, want)
			}
		}
	}
}

func FuzzSetNamespaces(f *testing.F) {
	for _, c := range namespaceCases {
		f.Add(c[0], c[1], c[2], c[2]+"-b")
	}
	f.Fuzz(func(t *testing.T, env, ct, dt1, dt2 string) {
		as := []Assignment{{DeploymentTarget: dt1}, {DeploymentTarget: dt2}, {DeploymentTarget: dt1}}
		setNamespaces(as, env, ct)
		for _, a := range as {
			if want := Namespace(env, ct, a.DeploymentTarget); a.Namespace != want {
				t.Fatalf("env %q, cluster type %q, target %q: %q, want %q", env, ct, a.DeploymentTarget, a.Namespace, want)
			}
		}
	})
}

// TestDeclaredNamespace: a target that declares its namespace gets it on every cluster type;
// the others beside it keep the namespace Namespace makes.
func TestDeclaredNamespace(t *testing.T) {
	for _, ct := range []string{"east", "west"} {
		as := []Assignment{
			{DeploymentTarget: "shop-api", Target: &controlplane.DeploymentTarget{Name: "shop-api", Namespace: "shop"}},
			{DeploymentTarget: "shop-web", Target: &controlplane.DeploymentTarget{Name: "shop-web"}},
		}
		setNamespaces(as, "dev", ct)
		if as[0].Namespace != "shop" {
			t.Errorf("cluster type %s: declared namespace: got %q, want shop", ct, as[0].Namespace)
		}
		if want := Namespace("dev", ct, "shop-web"); as[1].Namespace != want {
			t.Errorf("cluster type %s: undeclared namespace: got %q, want %q", ct, as[1].Namespace, want)
		}
	}
}
