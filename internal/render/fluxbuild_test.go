package render_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/testutil/fluxbuild"
)

// TestGoldenFoldersBuildWithFlux: every cluster type folder of the golden renders whose
// reconciler is a Kubernetes one (not a host's Ansible play) builds as Flux's
// kustomize-controller builds the path of the cluster's Kustomization.
func TestGoldenFoldersBuildWithFlux(t *testing.T) {
	folders := clusterTypeFolders(t, "testdata")
	if len(folders) == 0 {
		t.Fatal("no cluster type folder in testdata")
	}
	for _, dir := range folders {
		files := map[string][]byte{}
		err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			files["ct/"+filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := fluxbuild.Build(files, "ct", "")
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if len(res) == 0 {
			t.Errorf("%s: builds no object", dir)
		}
	}
}

// clusterTypeFolders are the folders under root whose subfolders hold a reconciler.yaml
// that is a Kubernetes object.
func clusterTypeFolders(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || e.Name() != "reconciler.yaml" || strings.Contains(p, "controlplane") {
			return err // a control plane's files are input, not output
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if !strings.Contains(string(data), "apiVersion:") || strings.HasPrefix(strings.TrimSpace(string(data)), "- ") {
			return nil // a host's play
		}
		if ct := filepath.Dir(filepath.Dir(p)); !slices.Contains(out, ct) {
			out = append(out, ct)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
