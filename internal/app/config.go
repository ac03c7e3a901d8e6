package app

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// ValuesFile is the name of the values files of a config repository.
const ValuesFile = "values.yaml"

// Config shapes.
const (
	// ShapeBranch is Kalypso's: a branch per environment (<env>, or <env>-configs as in
	// Kalypso's sample), a folder per deployment target.
	ShapeBranch = "branch"
	// ShapeFolder is one tree: <env>/values.yaml, <env>/<target>/values.yaml (and an optional
	// values.yaml at the root for every environment).
	ShapeFolder = "folder"
)

// EnvConfig is the config repository's content for one environment.
type EnvConfig struct {
	Environment string `json:"environment"`
	Shape       string `json:"shape"`
	// Branch is the branch read (ShapeBranch), or the ref read ("" for HEAD).
	Branch string `json:"branch,omitempty"`
	// Commit is the config commit read ("" for a directory).
	Commit string `json:"commit,omitempty"`
	// Root is the environment's folder ("" for ShapeBranch).
	Root string `json:"root,omitempty"`
	// files are the values files by path in the repository.
	files map[string][]byte
	// Folders are the deployment-target folders (folders with a values file and none below
	// them), by their name.
	Folders map[string]string `json:"folders"`
	// Problems are folders that repeat a name (each is reported, none is used).
	Problems []string `json:"problems,omitempty"`
}

// LoadConfig reads environment env of a config repository in either shape: a branch named
// env or env-configs means Kalypso's shape; else the folder env/ at ref (default HEAD).
func LoadConfig(repo *controlplane.Repo, env, ref string) (*EnvConfig, error) {
	c := &EnvConfig{Environment: env, Shape: ShapeFolder, Branch: ref, Root: env}
	for _, b := range []string{env, env + "-configs"} {
		if ref == "" && repo.HasBranch(b) {
			c.Shape, c.Branch, c.Root = ShapeBranch, b, ""
			break
		}
	}
	tree, err := repo.Tree(c.Branch)
	if err != nil {
		return nil, fmt.Errorf("config repository %s: %w", repo.Location, err)
	}
	c.Commit = tree.Revision()
	files, err := tree.Files()
	if err != nil {
		return nil, fmt.Errorf("config repository %s: %w", repo.Location, err)
	}
	c.files = map[string][]byte{}
	for _, f := range files {
		if path.Base(f) != ValuesFile || (c.Root != "" && f != ValuesFile && !strings.HasPrefix(f, c.Root+"/")) {
			continue
		}
		if c.files[f], err = tree.ReadFile(f); err != nil {
			return nil, err
		}
	}
	if c.Shape == ShapeFolder && !hasPrefix(c.files, c.Root+"/") {
		return nil, fmt.Errorf("config repository %s has neither a branch %s (or %s-configs) nor a folder %s/ with values.yaml files",
			repo.Location, env, env, env)
	}
	c.findFolders()
	return c, nil
}

func hasPrefix(files map[string][]byte, prefix string) bool {
	for f := range files {
		if strings.HasPrefix(f, prefix) {
			return true
		}
	}
	return false
}

// findFolders finds the leaf folders below the environment's root.
func (c *EnvConfig) findFolders() {
	dirs := map[string]bool{}
	for f := range c.files {
		dir := path.Dir(f)
		if c.Root != "" && !strings.HasPrefix(dir, c.Root+"/") {
			continue // the root's or the environment's own values.yaml
		}
		if dir != "." && dir != c.Root {
			dirs[dir] = true
		}
	}
	c.Folders = map[string]string{}
	byName := map[string][]string{}
	for d := range dirs {
		leaf := true
		for o := range dirs {
			if strings.HasPrefix(o, d+"/") {
				leaf = false
				break
			}
		}
		if leaf {
			byName[path.Base(d)] = append(byName[path.Base(d)], d)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		ds := byName[name]
		if len(ds) > 1 {
			slices.Sort(ds)
			c.Problems = append(c.Problems, fmt.Sprintf("config folders %s share the name %s: a deployment target's folder must be unique",
				strings.Join(ds, ", "), name))
			continue
		}
		c.Folders[name] = ds[0]
	}
}

// Chain returns the values files that apply to the target folder dir, from the root down.
func (c *EnvConfig) Chain(dir string) []string {
	var out []string
	if _, ok := c.files[ValuesFile]; ok {
		out = append(out, ValuesFile)
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		f := strings.Join(parts[:i+1], "/") + "/" + ValuesFile
		if _, ok := c.files[f]; ok {
			out = append(out, f)
		}
	}
	return out
}

// File returns a values file's content.
func (c *EnvConfig) File(p string) []byte { return c.files[p] }

// Mismatch is a config folder that matches no deployment target, or a target without a
// folder.
type Mismatch struct {
	// Folder is the config folder ("" for a target without one).
	Folder string `json:"folder,omitempty"`
	// Target is the deployment target without a folder ("" for a folder).
	Target string `json:"target,omitempty"`
	// Suggestion is the closest name on the other side, if any is close.
	Suggestion string `json:"suggestion,omitempty"`
	Message    string `json:"message"`
}

// Match pairs the environment's targets with the config folders. Folders matching no
// target and targets without a folder are returned as mismatches with a "did you mean".
func (c *EnvConfig) Match(targets []Target) (map[string]string, []Mismatch) {
	names := make([]string, 0, len(targets))
	for _, t := range targets {
		names = append(names, t.Name)
	}
	matched := map[string]string{}
	var out []Mismatch
	for _, t := range names {
		if dir, ok := c.Folders[t]; ok {
			matched[t] = dir
			continue
		}
		m := Mismatch{Target: t, Suggestion: closest(t, unmatched(c.Folders, names))}
		m.Message = fmt.Sprintf("deployment target %s of environment %s has no folder in the config repository (%s)",
			t, c.Environment, c.where())
		if m.Suggestion != "" {
			m.Message += fmt.Sprintf(": did you mean %s (rename the folder %s to %s)?", c.Folders[m.Suggestion], c.Folders[m.Suggestion], t)
		}
		out = append(out, m)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Folders)) {
		if slices.Contains(names, name) {
			continue
		}
		m := Mismatch{Folder: c.Folders[name], Suggestion: closest(name, names)}
		m.Message = fmt.Sprintf("config folder %s (%s) matches no deployment target of environment %s in the workload",
			c.Folders[name], c.where(), c.Environment)
		if m.Suggestion != "" {
			m.Message += fmt.Sprintf(": did you mean %s?", m.Suggestion)
		}
		out = append(out, m)
	}
	return matched, out
}

func (c *EnvConfig) where() string {
	if c.Shape == ShapeBranch {
		return "branch " + c.Branch
	}
	return "folder " + c.Root + "/"
}

func unmatched(folders map[string]string, targets []string) []string {
	var out []string
	for name := range folders {
		if !slices.Contains(targets, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// closest returns the candidate nearest to name (edit distance at most a third of the
// name's length, at least 2), or "".
func closest(name string, candidates []string) string {
	return controlplane.Closest(name, candidates, max(2, len(name)/3))
}
