package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
	"github.com/fleetform/fleetform/internal/testutil/crdtest"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

const onboardGitOps = "https://github.com/contoso/platform-gitops"

// objectsOf decodes a YAML stream of Kubernetes objects.
func objectsOf(t *testing.T, stream string) []map[string]any {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(stream))
	var out []map[string]any
	for {
		var obj map[string]any
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, stream)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
}

func field(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, _ := cur.(map[string]any)
		cur = m[p]
	}
	return cur
}

// TestOnboardCluster: onboard cluster registers the cluster with a real hub and prints what
// it needs: for Flux a GitRepository on the environment's GitOps branch and a Kustomization
// of the cluster type's folder, for Argo CD an Application, each valid against the real CRD
// schema, with the reporting agent and its working token in a Secret; for a host the agent's
// files. On a terminal, nothing is registered and no token printed unless --show-token.
func TestOnboardCluster(t *testing.T) {
	schemas := crdtest.Schemas(t)
	t.Setenv("FLEETFORM_HUB_ADMIN_TOKEN", "admin-secret")
	t.Setenv("FLEETFORM_HUB_TOKEN", "admin-secret")
	h := serveHub(t, filepath.Join(t.TempDir(), "hub.db"))
	cp := filepath.Join(t.TempDir(), "cp")
	if code, out, errOut := runFF(t, "init", cp, "--environments", "dev,prod", "--gitops", onboardGitOps); code != 0 {
		t.Fatalf("init: %d\n%s%s", code, out, errOut)
	}
	for _, args := range [][]string{
		{"add", "cluster-type", "plant-lyon", "--env", "dev", "--label", "site=lyon"},
		{"add", "cluster-type", "plant-argo", "--env", "dev", "--reconciler", "builtin/argocd"},
		{"add", "cluster-type", "vm-line", "--env", "prod", "--reconciler", "builtin/ansible", "--namespace-template", "builtin/ansible-user", "--config-template", "builtin/env-file"},
	} {
		if code, out, errOut := runFF(t, append(args, "--control-plane", cp, "--commit")...); code != 0 {
			t.Fatalf("%v: %d\n%s%s", args, code, out, errOut)
		}
	}
	onboard := func(want int, args ...string) (string, string) {
		t.Helper()
		code, out, errOut := runFF(t, append([]string{"onboard", "cluster"}, append(args, "--control-plane", cp)...)...)
		if code != want {
			t.Fatalf("onboard cluster %v: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out, errOut
	}

	// Flux, the cluster type's default: registered, then the objects.
	out, errOut := onboard(0, "plant-lyon-1", "--env", "dev", "--cluster-type", "plant-lyon", "--label", "site=lyon", "--hub", h.url, "-o", "yaml")
	mustContain(t, "stderr", errOut, `registered plant-lyon-1 on `, `flux reads `+onboardGitOps+`, branch dev, folder \./plant-lyon`)
	objs := objectsOf(t, out)
	var kinds []string
	var token string
	for _, obj := range objs {
		gvk := obj["apiVersion"].(string) + "/" + obj["kind"].(string)
		kinds = append(kinds, obj["kind"].(string))
		if s, ok := schemas[gvk]; ok {
			if err := s.Validate(obj); err != nil {
				t.Errorf("%s does not validate against its CRD schema: %v", gvk, err)
			}
		}
		switch obj["kind"] {
		case "GitRepository":
			if field(obj, "spec", "url") != onboardGitOps || field(obj, "spec", "ref", "branch") != "dev" {
				t.Errorf("GitRepository %v", obj["spec"])
			}
		case "Kustomization":
			if field(obj, "spec", "path") != "./plant-lyon" || field(obj, "spec", "sourceRef", "name") != authoring.PlatformObject ||
				field(obj, "metadata", "labels", authoring.LabelPlatform) != "true" {
				t.Errorf("Kustomization %v", obj)
			}
		case "ConfigMap":
			if field(obj, "data", "hub") != h.url || field(obj, "data", "cluster") != "plant-lyon-1" {
				t.Errorf("agent ConfigMap %v", obj["data"])
			}
		case "Secret":
			token, _ = field(obj, "stringData", "token").(string)
		}
	}
	if got := strings.Join(kinds, ","); got != "Namespace,ServiceAccount,ClusterRole,ClusterRoleBinding,ConfigMap,Secret,Deployment,GitRepository,Kustomization" {
		t.Errorf("kinds %s", got)
	}
	// The token in the Secret is the cluster's: it reports.
	c, err := client.New(h.url, token, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Report(context.Background(), hub.Report{Cluster: "plant-lyon-1", Revision: "abc", Status: hub.Compliant, ObservedAt: time.Now()}); err != nil {
		t.Errorf("the printed token does not report: %v", err)
	}
	// Once registered, again is refused; --rotate issues a new token.
	onboard(cli.ExitFailed, "plant-lyon-1", "--env", "dev", "--cluster-type", "plant-lyon", "--hub", h.url)
	out, _ = onboard(0, "plant-lyon-1", "--env", "dev", "--cluster-type", "plant-lyon", "--hub", h.url, "--rotate")
	if strings.Contains(out, token) || !strings.Contains(out, "token: ff_") {
		t.Error("--rotate did not print a new token")
	}

	// Argo CD: the Application, from the cluster type's template; -o json for machines.
	out, _ = onboard(0, "plant-argo-1", "--env", "dev", "--cluster-type", "plant-argo", "--hub", h.url, "-o", "json")
	var b authoring.ClusterBootstrap
	if err := json.Unmarshal([]byte(out), &b); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if b.Reconciler != "argocd" || !b.TokenIncluded || b.GitOps.Repo != onboardGitOps || len(b.Objects) != 8 {
		t.Fatalf("bootstrap %+v", b)
	}
	app := b.Objects[7]
	if err := schemas["argoproj.io/v1alpha1/Application"].Validate(app); err != nil {
		t.Errorf("the Application does not validate against its CRD schema: %v", err)
	}
	if field(app, "spec", "source", "path") != "plant-argo" || field(app, "spec", "source", "targetRevision") != "dev" {
		t.Errorf("Application %v", app["spec"])
	}

	// A host: the token file, the systemd service and timer, as a script.
	out, _ = onboard(0, "line-7-vm-3", "--env", "prod", "--cluster-type", "vm-line", "--hub", h.url)
	mustContain(t, "host script", out, `^#!/bin/sh\n`, `install -m '0600' /dev/null '/etc/fleetform/agent-token'`,
		`\nprintf '%s' 'ff_\S+\n' > '/etc/fleetform/agent-token'\n`,
		`--gitops "`+onboardGitOps+`" --branch "prod"`, `--cluster-type "vm-line"`, `--cluster "line-7-vm-3" --token-file "/etc/fleetform/agent-token"`,
		`systemctl enable --now fleetform-agent.timer`)

	// On a terminal: a preview, nothing registered, no token; --show-token registers and prints it.
	restore := cli.SetStdoutIsTerminal(func(io.Writer) bool { return true })
	defer restore()
	out, errOut = onboard(0, "plant-lyon-2", "--env", "dev", "--cluster-type", "plant-lyon", "--hub", h.url)
	mustContain(t, "preview", out, `token: <the cluster's token, not printed to a terminal>`, `holds a placeholder`)
	mustContain(t, "preview's stderr", errOut, `preview: stdout is a terminal, so plant-lyon-2 is not registered`)
	if strings.Contains(out, "ff_") {
		t.Error("a token was printed to a terminal")
	}
	admin, err := client.New(h.url, "admin-secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Cluster(context.Background(), "plant-lyon-2"); !errors.Is(err, hub.ErrNotFound) {
		t.Errorf("the preview registered the cluster: %v", err)
	}
	out, _ = onboard(0, "plant-lyon-2", "--env", "dev", "--cluster-type", "plant-lyon", "--hub", h.url, "--show-token")
	if !strings.Contains(out, "token: ff_") {
		t.Error("--show-token did not print the token")
	}

	// Refused: an unknown cluster type, a wrong reconciler, a name that is not DNS-1123.
	_, errOut = onboard(cli.ExitFailed, "x-1", "--env", "dev", "--cluster-type", "nope", "--hub", h.url)
	mustContain(t, "unknown cluster type", errOut, `cluster type "nope" is not defined in dev; defined: plant-argo, plant-lyon`)
	onboard(cli.ExitUsage, "x-1", "--env", "dev", "--cluster-type", "plant-lyon", "--reconciler", "helm")
	onboard(cli.ExitUsage, "X_1", "--env", "dev", "--cluster-type", "plant-lyon")

	// Without --hub: the reconciler's objects only.
	out, _ = onboard(0, "plant-lyon-3", "--env", "dev", "--cluster-type", "plant-lyon")
	if objs := objectsOf(t, out); len(objs) != 2 || bytes.Contains([]byte(out), []byte("Secret")) {
		t.Errorf("without --hub:\n%s", out)
	}
}

// TestOnboardClusterKalypso: on Kalypso's sample (branch per environment), the cluster reads
// the environment's GitOpsRepo: kalypso-gitops, branch dev, the cluster type's folder.
func TestOnboardClusterKalypso(t *testing.T) {
	schemas := crdtest.Schemas(t)
	k := gittest.NewKalypso(t)
	code, out, errOut := runFF(t, "onboard", "cluster", "large-1", "--env", "dev", "--cluster-type", "large",
		"--control-plane", k.ControlPlane.Dir, "--repo-map", gittest.SvcSrcURL+"="+k.SvcSrc.Dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	objs := objectsOf(t, out)
	if len(objs) != 2 {
		t.Fatalf("objects:\n%s", out)
	}
	for _, obj := range objs {
		if err := schemas[obj["apiVersion"].(string)+"/"+obj["kind"].(string)].Validate(obj); err != nil {
			t.Errorf("%s: %v", obj["kind"], err)
		}
	}
	if field(objs[0], "spec", "url") != "https://github.com/microsoft/kalypso-gitops" || field(objs[0], "spec", "ref", "branch") != "dev" ||
		field(objs[1], "spec", "path") != "./large" {
		t.Errorf("objects:\n%s", out)
	}
}
