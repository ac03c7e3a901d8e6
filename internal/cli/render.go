package cli

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/platform"
)

type renderOptions struct {
	cp  controlPlaneOptions
	out outputOption
	dir string
}

type renderJSON struct {
	Environment  string       `json:"environment"`
	Out          string       `json:"out"`
	Assignments  int          `json:"assignments"`
	ClusterTypes int          `json:"clusterTypes"`
	Written      []string     `json:"written"`
	Unchanged    int          `json:"unchanged"`
	Removed      []string     `json:"removed"`
	Failed       []failedJSON `json:"failed"`
	diagnosticsJSON
}

type failedJSON struct {
	ClusterType      string `json:"clusterType"`
	DeploymentTarget string `json:"deploymentTarget"`
	Error            string `json:"error"`
}

func newRenderCmd(e *env) *cobra.Command {
	var o renderOptions
	cmd := &cobra.Command{
		Use: "render",
		Example: "  fleetform render --control-plane ./platform --env dev --out out/dev\n" +
			"  # a Kalypso control plane, with its workload repository cloned next to it\n" +
			"  fleetform render --control-plane ./kalypso-control-plane --env dev --out /tmp/dev --repo-map https://github.com/org/kalypso-svc-src=../kalypso-svc-src",
		Short: "Render an environment's GitOps tree into a folder",
		Long: "render writes the environment's GitOps tree into --out, which stands for the GitOpsRepo's\n" +
			"path: <clusterType>/README.md, <clusterType>/<deploymentTarget>/{reconciler,namespace,\n" +
			"platform-config}.yaml and .github/tracking/Promoted_Commit_Id. Inside the cluster-type\n" +
			"folders it renders, files it no longer renders are removed, except those of assignments\n" +
			"that failed, which keep their previous files. Anything else in --out is left alone.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.out.check(); err != nil {
				return err
			}
			if o.dir == "" {
				return failed(ExitUsage, fmt.Errorf("--out is required"))
			}
			r, err := o.cp.pipeline(cmd.Context(), e, upToRender)
			if err != nil {
				return err
			}
			return o.write(e, r)
		},
	}
	o.cp.bind(cmd, e, true)
	o.out.bind(cmd)
	cmd.Flags().StringVar(&o.dir, "out", "", "folder to write the tree into (stands for the GitOpsRepo path)")
	return cmd
}

func (o *renderOptions) write(e *env, r *result) error {
	doc := renderJSON{Environment: r.snap.Environment, Out: o.dir, Assignments: len(r.output.Assignments),
		ClusterTypes: len(r.output.ClusterTypes), Written: []string{}, Removed: []string{}, Failed: []failedJSON{},
		diagnosticsJSON: splitDiagnostics(r.diagnostics())}
	keep := map[string]bool{}
	for _, a := range r.output.Failed() {
		keep[a.Dir()+"/"] = true
		doc.Failed = append(doc.Failed, failedJSON{ClusterType: a.ClusterType, DeploymentTarget: a.DeploymentTarget, Error: a.Err.Error()})
	}
	// With errors in the input, a target may be missing only because its file is broken:
	// folders of targets that are no longer scheduled are then kept.
	var current map[string]bool
	if platform.HasErrors(r.snap.Diagnostics) || len(r.sched.FailedPolicies) > 0 {
		current = map[string]bool{}
		for i := range r.output.Assignments {
			current[r.output.Assignments[i].Dir()+"/"] = true
		}
	}
	tree := r.output.Tree()
	var err error
	if doc.Removed, err = removeStale(o.dir, r.output.ClusterTypes, tree, keep, current); err != nil {
		return failed(ExitFailed, err)
	}
	if doc.Written, doc.Unchanged, err = writeTree(o.dir, tree); err != nil {
		return failed(ExitFailed, err)
	}
	printDiagnostics(e.stderr, r.diagnostics())
	err = o.out.write(e.stdout, doc, func(w io.Writer) error {
		fmt.Fprintf(w, "rendered environment %s: %d assignment(s) on %d cluster type(s) into %s\n",
			doc.Environment, doc.Assignments-len(doc.Failed), doc.ClusterTypes, o.dir)
		fmt.Fprintf(w, "files: %d written, %d unchanged, %d removed\n", len(doc.Written), doc.Unchanged, len(doc.Removed))
		if err := perClusterType(w, r, doc.Written); err != nil {
			return err
		}
		if len(doc.Failed) > 0 {
			fmt.Fprintf(w, "%d assignment(s) failed and kept their previous files:\n", len(doc.Failed))
			t := newTable(w, "  CLUSTER TYPE", "DEPLOYMENT TARGET", "ERROR")
			for _, f := range doc.Failed {
				t.row("  "+f.ClusterType, f.DeploymentTarget, f.Error)
			}
			return t.flush()
		}
		return nil
	})
	if err != nil {
		return failed(ExitFailed, err)
	}
	if len(doc.Errors) > 0 {
		return failed(ExitFailed, nil)
	}
	return nil
}

// perClusterType prints, for each cluster type, its assignments and files written.
func perClusterType(w io.Writer, r *result, written []string) error {
	assigned, failedN, writes := map[string]int{}, map[string]int{}, map[string]int{}
	for i := range r.output.Assignments {
		a := &r.output.Assignments[i]
		assigned[a.ClusterType]++
		if a.Err != nil {
			failedN[a.ClusterType]++
		}
	}
	for _, p := range written {
		ct, _, _ := strings.Cut(p, "/")
		writes[ct]++
	}
	fmt.Fprintln(w)
	t := newTable(w, "CLUSTER TYPE", "ASSIGNMENTS", "FAILED", "FILES WRITTEN")
	for _, ct := range r.output.ClusterTypes {
		t.row(ct, fmt.Sprint(assigned[ct]), fmt.Sprint(failedN[ct]), fmt.Sprint(writes[ct]))
	}
	return t.flush()
}

// writeWorkers is how many files are written at once: creating files is mostly kernel
// time, which a few writers overlap.
const writeWorkers = 4

// writeTree writes every file whose content differs, and returns the written paths. Folders
// are created once; files in folders that did not exist are written without reading first.
func writeTree(dir string, tree map[string][]byte) (written []string, unchanged int, err error) {
	paths := make([]string, 0, len(tree))
	for p := range tree {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	fresh, err := makeDirs(dir, paths)
	if err != nil {
		return nil, 0, err
	}
	wrote := make([]bool, len(paths))
	errs := make(chan error, writeWorkers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range writeWorkers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				p := paths[i]
				full := filepath.Join(dir, filepath.FromSlash(p))
				if !fresh[path.Dir(p)] {
					if old, err := os.ReadFile(full); err == nil && bytes.Equal(old, tree[p]) {
						continue
					}
				}
				if err := os.WriteFile(full, tree[p], 0o644); err != nil {
					errs <- err
					return
				}
				wrote[i] = true
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, 0, err
	}
	written = []string{}
	for i, w := range wrote {
		if w {
			written = append(written, paths[i])
		} else {
			unchanged++
		}
	}
	return written, unchanged, nil
}

// makeDirs creates the folders of paths under dir and returns the ones it created.
func makeDirs(dir string, paths []string) (map[string]bool, error) {
	fresh := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range paths {
		d := path.Dir(p)
		if seen[d] {
			continue
		}
		seen[d] = true
		full := filepath.Join(dir, filepath.FromSlash(d))
		if _, err := os.Stat(full); err == nil {
			continue
		}
		if err := os.MkdirAll(full, 0o755); err != nil {
			return nil, err
		}
		fresh[d] = true
	}
	return fresh, nil
}

// removeStale removes files inside the rendered cluster-type folders that are not in the
// tree, except under the folders in keep and, when current is not nil, under folders of
// targets that are not in current.
func removeStale(dir string, clusterTypes []string, tree map[string][]byte, keep, current map[string]bool) ([]string, error) {
	removed := []string{}
	for _, ct := range clusterTypes {
		root := filepath.Join(dir, ct)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel, _ := filepath.Rel(dir, p)
			rel = filepath.ToSlash(rel)
			if _, ok := tree[rel]; ok || keptBy(rel, keep) || (current != nil && targetDir(rel) != "" && !current[targetDir(rel)]) {
				return nil
			}
			removed = append(removed, rel)
			return os.Remove(p)
		})
		if err != nil {
			return nil, err
		}
		removeEmptyDirs(root)
	}
	sort.Strings(removed)
	return removed, nil
}

// targetDir returns the <clusterType>/<deploymentTarget>/ folder of a path, or "".
func targetDir(p string) string {
	parts := strings.SplitN(p, "/", 3)
	if len(parts) < 3 {
		return ""
	}
	return parts[0] + "/" + parts[1] + "/"
}

// keptBy reports whether p is inside one of the <clusterType>/<deploymentTarget>/ folders
// in keep.
func keptBy(p string, keep map[string]bool) bool {
	d := targetDir(p)
	return d != "" && keep[d]
}

func removeEmptyDirs(root string) {
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		_ = os.Remove(dirs[i]) // fails, harmlessly, when not empty
	}
}
