package app

import (
	"strings"
	"testing"
)

func TestRefuseRemoteBases(t *testing.T) {
	for _, r := range []string{"https://github.com/org/repo//base?ref=v1", "github.com/org/repo/base", "git@github.com:org/repo.git"} {
		err := refuseRemote("deploy/kustomization.yaml", []byte("resources: [deployment.yaml, \""+r+"\"]\n"))
		if err == nil || !strings.Contains(err.Error(), "remote base") {
			t.Errorf("%s: %v", r, err)
		}
	}
	if err := refuseRemote("k.yaml", []byte("resources: [../common, deployment.yaml]\n")); err != nil {
		t.Error(err)
	}
	err := refuseRemote("k.yaml", []byte("configMapGenerator:\n  - name: x\n    files: [conf=https://example.com/conf]\n"))
	if err == nil || !strings.Contains(err.Error(), "remote file https://example.com/conf") {
		t.Errorf("remote file: %v", err)
	}
	inline := "patches:\n  - patch: |\n      - op: add\n        path: /metadata/annotations/docs\n        value: https://example.com\n"
	if err := refuseRemote("k.yaml", []byte(inline)); err != nil {
		t.Errorf("an inline patch naming a URL: %v", err)
	}
}
