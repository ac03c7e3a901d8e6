package controlplane_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// TestSourceIgnore checks Flux's .sourceignore semantics on a directory and on a git commit
// alike: default exclusions first, then every .sourceignore with its folder as domain,
// deeper files overriding shallower ones, gitignore negation, and only YAML files read.
func TestSourceIgnore(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"environments/dev/env.yaml": envDoc("dev"),
		".sourceignore": "# comment\n\n" +
			"old/\n" + // a folder anywhere
			"*.draft.yaml\r\n" + // CRLF line ending
			"/drafts/*\n" +
			"!/drafts/keep.yaml\n" +
			"/vendor/\n" +
			"!/vendor/keep.yaml\n" + // a file in an excluded folder cannot be re-included
			"*.gen.yaml\n",
		"a.yaml":                  templateDoc("root"),
		"old/a.yaml":              templateDoc("old"),
		"deep/old/a.yaml":         templateDoc("deep-old"),
		"x.draft.yaml":            templateDoc("draft"),
		"drafts/a.yaml":           templateDoc("drafts-a"),
		"drafts/keep.yaml":        templateDoc("drafts-keep"),
		"vendor/keep.yaml":        templateDoc("vendor-keep"),
		"root.gen.yaml":           templateDoc("root-gen"),
		"apps/.sourceignore":      "local.yaml\n/only-here.yaml\n!keep.gen.yaml\n",
		"apps/local.yaml":         templateDoc("apps-local"),
		"apps/sub/local.yaml":     templateDoc("apps-sub-local"),
		"local.yaml":              templateDoc("root-local"), // outside the domain of apps/.sourceignore
		"apps/only-here.yaml":     templateDoc("apps-only-here"),
		"apps/sub/only-here.yaml": templateDoc("apps-sub-only-here"),
		"apps/keep.gen.yaml":      templateDoc("apps-keep-gen"),
		"apps/other.gen.yaml":     templateDoc("apps-other-gen"),
		// A deeper .sourceignore wins over a shallower one, whatever the folder names.
		"p/.sourceignore":    "gen.yaml\n",
		"p/-q/.sourceignore": "!gen.yaml\n",
		"p/-q/gen.yaml":      templateDoc("p-q-gen"),
		"p/gen.yaml":         templateDoc("p-gen"),
		// Flux's default exclusions.
		".github/workflows/ci.yaml": "on: push\n",
		".circleci/config.yml":      "version: 2\n",
		".gitlab-ci.yml":            "stages: []\n",
		".travis.yml":               "language: go\n",
		"cloudbuild.yaml":           "steps: []\n",
		".sops.yaml":                "creation_rules: []\n",
		"sub/.sops.yaml":            "creation_rules: []\n",
		"sub/.flux.yaml":            "x: 1\n",
		"sub/.goreleaser.yml":       "builds: []\n",
		"img.png/a.yaml":            templateDoc("in-png-folder"),
		// Only .yaml and .yml files are read.
		"README.md":         "# docs\n",
		"values.json":       `{"a": 1}`,
		"script.sh":         templateDoc("sh"),
		"notes.txt":         "kind: nope\n",
		"upper.YAML":        templateDoc("upper-yaml"),
		"short.yml":         templateDoc("short-yml"),
		"chart/.helmignore": "*.tgz\n",
	}
	wantTemplates := []string{"apps-keep-gen", "apps-sub-only-here", "drafts-keep", "p-q-gen", "root", "root-local", "short-yml", "upper-yaml"}

	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		snap := load(t, newDir(t, files), "dev", controlplane.Options{})
		requireNoDiags(t, snap)
		equal(t, "templates", templateNames(snap), wantTemplates)
	})
	t.Run("git", func(t *testing.T) {
		t.Parallel()
		r := gittest.New(t)
		r.Commit(t, "main", files)
		setHead(t, r, "main")
		snap := load(t, r.Dir, "dev", controlplane.Options{})
		requireNoDiags(t, snap)
		equal(t, "templates", templateNames(snap), wantTemplates)
	})
}

// TestSourceIgnoreScopedToEnvironment: a .sourceignore in an environment's folder applies to
// that folder, and the root .sourceignore applies to every folder.
func TestSourceIgnoreScopedToEnvironment(t *testing.T) {
	t.Parallel()
	snap := loadFolder(t, map[string]string{
		".sourceignore":                   "*.local.yaml\n",
		"environments/dev/.sourceignore":  "scratch/\n",
		"environments/dev/ct.yaml":        clusterTypeDoc("kept"),
		"environments/dev/scratch/a.yaml": clusterTypeDoc("scratch"),
		"environments/dev/b.local.yaml":   clusterTypeDoc("local"),
		"scratch/t.yaml":                  templateDoc("common-scratch"), // outside environments/dev/
	})
	requireNoDiags(t, snap)
	checkLoaded(t, snap, "ClusterType/kept", "Template/common-scratch")
}

// TestSymlinksSkipped: symbolic links are not read, in a directory or in a commit (Flux
// archives regular files only), and each is a warning naming the file.
func TestSymlinksSkipped(t *testing.T) {
	t.Parallel()
	t.Run("directory", func(t *testing.T) {
		t.Parallel()
		dir := newDir(t, map[string]string{"environments/dev/env.yaml": envDoc("dev"), "real.yaml": templateDoc("real")})
		if err := os.Symlink("real.yaml", filepath.Join(dir, "link.yaml")); err != nil {
			t.Skipf("symlinks not supported: %v", err)
		}
		snap := load(t, dir, "dev", controlplane.Options{})
		checkDiags(t, snap.Diagnostics, linkWarning)
		checkLoaded(t, snap, "Template/real")
	})
	t.Run("git", func(t *testing.T) {
		t.Parallel()
		r := gittest.New(t)
		commitWithSymlink(t, r, map[string]string{"environments/dev/env.yaml": envDoc("dev"), "real.yaml": templateDoc("real")},
			"link.yaml", "real.yaml")
		snap := load(t, r.Dir, "dev", controlplane.Options{})
		checkDiags(t, snap.Diagnostics, linkWarning)
		checkLoaded(t, snap, "Template/real")
	})
}

// linkWarning is the warning of a symbolic link link.yaml.
var linkWarning = want{sev: controlplane.SeverityWarning, file: "link.yaml", has: []string{"is a symbolic link: not read", ".sourceignore"}}

// commitWithSymlink commits files on main plus a symbolic link at the root named link,
// pointing to target.
func commitWithSymlink(t *testing.T, r *gittest.Repo, files map[string]string, link, target string) {
	t.Helper()
	base := r.Commit(t, "main", files)
	c, err := r.Git.CommitObject(base)
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Tree()
	if err != nil {
		t.Fatal(err)
	}
	s := r.Git.Storer
	blob := s.NewEncodedObject()
	blob.SetType(plumbing.BlobObject)
	w, _ := blob.Writer()
	_, _ = w.Write([]byte(target))
	_ = w.Close()
	bh, err := s.SetEncodedObject(blob)
	if err != nil {
		t.Fatal(err)
	}
	tree := &object.Tree{Entries: append([]object.TreeEntry{{Name: link, Mode: filemode.Symlink, Hash: bh}}, root.Entries...)}
	// Git orders entries by name; "link.yaml" sorts before "real.yaml" and after "environments".
	tree.Entries[0], tree.Entries[1] = tree.Entries[1], tree.Entries[0]
	obj := s.NewEncodedObject()
	if err := tree.Encode(obj); err != nil {
		t.Fatal(err)
	}
	th, err := s.SetEncodedObject(obj)
	if err != nil {
		t.Fatal(err)
	}
	commit := &object.Commit{Author: c.Author, Committer: c.Committer, Message: "symlink", TreeHash: th, ParentHashes: []plumbing.Hash{base}}
	cobj := s.NewEncodedObject()
	if err := commit.Encode(cobj); err != nil {
		t.Fatal(err)
	}
	ch, err := s.SetEncodedObject(cobj)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), ch)); err != nil {
		t.Fatal(err)
	}
	setHead(t, r, "main")
}
