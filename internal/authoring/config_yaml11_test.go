package authoring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	k8syaml "sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// TestSetConfigYAML11Booleans: a config value that YAML 1.1 reads as a boolean when plain
// (NO, on, y) is written quoted, so that kubectl and every YAML 1.1 reader read the string a
// ConfigMap's data holds, in a new ConfigMap as in one that exists, and inside a structured
// value's YAML text (a boolean there stays one); the values already in the file are left as
// they are written.
func TestSetConfigYAML11Booleans(t *testing.T) {
	ctx := t.Context()
	dir := devControlPlane(t, t.TempDir())
	set := func(data map[string]any) *Result {
		t.Helper()
		res, err := Apply(ctx, Request{ControlPlane: dir, Mode: ModeWrite, Operations: []Operation{
			{Op: OpSet, Kind: v1alpha1.KindConfigMap, Env: "dev", Data: data, Scope: &ConfigScope{EnvironmentWide: true}}}})
		if err != nil || len(res.Files) != 1 {
			t.Fatalf("set config %v: %+v, %v", data, res, err)
		}
		return res
	}
	res := set(map[string]any{"COUNTRY": "NO", "TLS": "on", "ANSWER": "y"}) // a new ConfigMap
	p := filepath.Join(dir, filepath.FromSlash(res.Files[0].Path))
	text, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// The file as a hand would edit it: a plain yes of its own.
	if err := os.WriteFile(p, []byte(strings.Replace(string(text), "\ndata:\n", "\ndata:\n  LEGACY: yes\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	// The ConfigMap that exists, and a structured value, whose YAML text is quoted the same way.
	set(map[string]any{"DEBUG": "Off", "FLAG": true, "NAME": "Norway", "PAIRS": "{a: NO, b: true, on: 1}"})
	text, err = os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`  ANSWER: "y"`, `  COUNTRY: "NO"`, `  TLS: "on"`, `  DEBUG: "Off"`, `  FLAG: "true"`, `  NAME: Norway`, `  LEGACY: yes`,
		"  PAIRS: |\n    a: \"NO\"\n    b: true\n    \"on\": 1"} {
		if !strings.Contains(string(text), "\n"+line+"\n") {
			t.Errorf("%s has no line %q:\n%s", p, line, text)
		}
	}
	var cm struct{ Data map[string]any }
	if err := k8syaml.Unmarshal(text, &cm); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	for k, want := range map[string]any{"ANSWER": "y", "COUNTRY": "NO", "TLS": "on", "DEBUG": "Off", "FLAG": "true", "NAME": "Norway", "LEGACY": true} {
		if cm.Data[k] != want {
			t.Errorf("%s: YAML 1.1 reads %s as %#v, want %#v", p, k, cm.Data[k], want)
		}
	}
}

// TestLabelsYAML11Booleans: a label value (or a spec string) that YAML 1.1 reads as a
// boolean is written quoted: a label is a string, and kubectl reads YAML 1.1.
func TestLabelsYAML11Booleans(t *testing.T) {
	dir := devControlPlane(t, t.TempDir())
	res, err := Apply(t.Context(), Request{ControlPlane: dir, Mode: ModeWrite, Operations: []Operation{
		{Op: OpAdd, Kind: v1alpha1.KindClusterType, Env: "dev", Name: "plant", Labels: map[string]string{"gpu": "no", "region": "west"}}}})
	if err != nil || len(res.Files) != 1 {
		t.Fatalf("add cluster-type: %+v, %v", res, err)
	}
	text, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(res.Files[0].Path)))
	if err != nil {
		t.Fatal(err)
	}
	var ct struct {
		Metadata struct{ Labels map[string]any }
	}
	if err := k8syaml.Unmarshal(text, &ct); err != nil {
		t.Fatal(err)
	}
	if ct.Metadata.Labels["gpu"] != "no" || ct.Metadata.Labels["region"] != "west" {
		t.Errorf("labels as YAML 1.1 reads them: %v\n%s", ct.Metadata.Labels, text)
	}
}

// devControlPlane writes into dir a folder-layout control plane with one environment, dev,
// and returns dir.
func devControlPlane(t *testing.T, dir string) string {
	t.Helper()
	env := "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Environment\nmetadata: {name: dev}\n" +
		"spec:\n  controlPlane: {repo: https://example.com/cp, branch: main, path: .}\n"
	if err := os.MkdirAll(filepath.Join(dir, "environments", "dev"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "environments", "dev", "env.yaml"), []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}
