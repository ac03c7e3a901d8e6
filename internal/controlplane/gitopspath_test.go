package controlplane_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// TestCheckGitOpsPath: a GitOpsRepo's path is a folder relative to the repository's root
// that git can check out; absolute paths, .. and every name git takes for .git are refused.
func TestCheckGitOpsPath(t *testing.T) {
	t.Parallel()
	valid := []string{"", ".", "./", "./x", "x", "x/y", "x/y/", "clusters/dev", " x ", ".github", ".gitignore",
		".fleetform", "x/./y", "git", "git~2", ".git-x", "x.git", "git~1x", "aux", ".g\u200cita", "é/ü"}
	for _, p := range valid {
		if err := controlplane.CheckGitOpsPath(p); err != nil {
			t.Errorf("CheckGitOpsPath(%q) = %v, want nil", p, err)
		}
	}
	invalid := map[string]string{
		"/abs":                       "is absolute",
		"/":                          "is absolute",
		"C:/x":                       "drive letter",
		"c:":                         "drive letter",
		"..":                         "has a .. component",
		"../escape":                  "has a .. component",
		"a/../../b":                  "has a .. component",
		"a/..":                       "has a .. component",
		"a//b":                       "empty component",
		`a\b`:                        "backslash",
		`..\x`:                       "backslash",
		"a\x00b":                     "control character",
		"a\nb":                       "control character",
		"a\x7fb":                     "control character",
		"\xff":                       "not valid UTF-8",
		".git":                       ".git folder",
		" .git ":                     ".git folder",
		".git/":                      ".git folder",
		"./.git":                     ".git folder",
		"x/.git/y":                   ".git folder",
		".GIT":                       ".git folder",
		".Git":                       ".git folder",
		".git.":                      ".git folder",
		".git. .":                    ".git folder",
		".git :x":                    ".git folder",
		".git::$INDEX_ALLOCATION":    ".git folder",
		"x/.git /y":                  ".git folder",
		"git~1":                      ".git folder",
		"GIT~1.":                     ".git folder",
		".g\u200cit":                 ".git folder",
		"\ufeff.GIT\u200d":           ".git folder",
		"x/.\u202eg\u206ai\u200ft/y": ".git folder",
	}
	for p, want := range invalid {
		err := controlplane.CheckGitOpsPath(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckGitOpsPath(%q) = %v, want an error containing %q", p, err, want)
		}
	}
}

// TestCheckTreeName: the names the GitOps writer refuses to put in a tree.
func TestCheckTreeName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"README.md", ".github", ".fleetform", "git", ".gitx", "x.git"} {
		if err := controlplane.CheckTreeName(name); err != nil {
			t.Errorf("CheckTreeName(%q) = %v, want nil", name, err)
		}
	}
	for _, name := range []string{"", ".", "..", "a/b", "a\x00b", ".git", ".GiT", ".git ", "git~1", ".g\u200dit"} {
		if err := controlplane.CheckTreeName(name); err == nil {
			t.Errorf("CheckTreeName(%q) = nil, want an error", name)
		}
	}
	if err := controlplane.CheckTreeName(".GIT."); !errors.Is(err, controlplane.ErrGitDir) {
		t.Errorf("CheckTreeName(.GIT.) = %v, want ErrGitDir", err)
	}
}

// TestGitOpsRepoPathIsChecked: a GitOpsRepo whose path cannot be written to is reported on
// the line of spec.path when the environment loads (so validate reports it).
func TestGitOpsRepoPathIsChecked(t *testing.T) {
	t.Parallel()
	for path, msg := range map[string]string{
		".git":      `path ".git": ".git" names the repository's .git folder`,
		"../escape": `path "../escape" has a .. component`,
		"a/../../b": `path "a/../../b" has a .. component`,
		"/abs":      `path "/abs" is absolute`,
		"x/.GIT./y": `path "x/.GIT./y": ".GIT." names the repository's .git folder`,
	} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			snap := loadFolder(t, map[string]string{"environments/dev/gitops.yaml": kindDoc("GitOpsRepo", "dev",
				"spec:\n  repo: https://example.com/gitops\n  branch: dev\n  path: "+path+"\n")})
			checkDiags(t, snap.Diagnostics, want{file: "environments/dev/gitops.yaml", line: 8,
				has: []string{"GitOpsRepo/dev: spec.path: " + msg, "give a folder relative to the repository's root"}})
		})
	}
	for _, path := range []string{".", "./x", "x/y/", "clusters/dev"} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			snap := loadFolder(t, map[string]string{"environments/dev/gitops.yaml": kindDoc("GitOpsRepo", "dev",
				"spec:\n  repo: https://example.com/gitops\n  branch: dev\n  path: "+path+"\n")})
			checkDiags(t, snap.Diagnostics)
			checkLoaded(t, snap, "GitOpsRepo/dev")
		})
	}
}
