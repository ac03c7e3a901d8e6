package app_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/testutil/fluxbuild"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// realDir holds the corpus of public charts and kustomize bases with the output the real
// helm and kustomize produce for them (testdata/real/README.md; scripts/render-expected.sh
// writes expected/).
const realDir = "testdata/real"

// How much of the differences a target reports.
const (
	realMaxKeys  = 8 // keys listed per kind of difference
	realMaxPaths = 6 // field paths shown per different object
	realMaxValue = 120
)

// TestRealCharts renders every case of testdata/real with fleetform and compares each
// target's objects with the real helm's or kustomize's (expected/<target>.yaml), keyed by
// apiVersion/kind/namespace/name; a target with expected/<target>.err is one that helm
// refuses, and fleetform must refuse it too. One case: -run TestRealCharts/podinfo.
func TestRealCharts(t *testing.T) {
	entries, err := os.ReadDir(realDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) { testRealCase(t, filepath.Join(realDir, e.Name())) })
	}
	if n == 0 {
		t.Fatalf("no case in %s", realDir)
	}
}

// realWorkload is what the test reads of a case's workload.yaml.
type realWorkload struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		DeploymentTargets []struct {
			Name        string `json:"name"`
			Environment string `json:"environment"`
			Namespace   string `json:"namespace"`
		} `json:"deploymentTargets"`
	} `json:"spec"`
}

func testRealCase(t *testing.T, dir string) {
	t.Helper()
	srcDir, err := filepath.EvalSymlinks(filepath.Join(dir, "source")) // a case may share another's source
	if err != nil {
		t.Fatal(err)
	}
	files := gittest.ReadDir(t, srcDir)
	var w realWorkload
	if err := sigsyaml.Unmarshal([]byte(files["workload.yaml"]), &w); err != nil {
		t.Fatalf("workload.yaml: %v", err)
	}
	src, cfg := gittest.New(t), gittest.New(t)
	src.Commit(t, "main", files)
	cfg.Commit(t, "main", gittest.ReadDir(t, filepath.Join(dir, "config")))
	repos := controlplane.NewRepos(nil, nil, nil)
	a := loadApp(t, repos, src.Dir)
	cfgRepo := openRepo(t, repos, cfg.Dir)

	var envs []string
	for _, dt := range w.Spec.DeploymentTargets {
		if !slices.Contains(envs, dt.Environment) {
			envs = append(envs, dt.Environment)
		}
	}
	for _, env := range envs {
		run := newRun(t, a, cfgRepo, env, "main", nil, "")
		for _, tr := range run.Targets {
			t.Run(tr.Target.Name, func(t *testing.T) {
				var rendered map[string][]byte
				folder, err := run.Render(t.Context(), tr)
				if err == nil {
					rendered = folder.Files
					checkFluxBuild(t, rendered, tr.Target.Namespace)
				}
				checkRealTarget(t, dir, a, tr.Target.Name, rendered, err)
			})
		}
	}
}

func checkRealTarget(t *testing.T, dir string, a *app.App, target string, rendered map[string][]byte, renderErr error) {
	t.Helper()
	exp := filepath.Join(dir, "expected", target)
	if helmErr, err := os.ReadFile(exp + ".err"); err == nil {
		if renderErr == nil {
			t.Errorf("helm refuses the values, fleetform rendered %d files; helm says:\n%s", len(rendered), helmErr)
			return
		}
		// Refused for the schema's reason: fleetform's error says so and names the fields helm
		// names (a template that fails on the value later is not the same refusal).
		msg := renderErr.Error()
		var lack []string
		if !strings.Contains(msg, "schema") {
			lack = append(lack, `"schema"`)
		}
		for _, m := range helmSchemaPath.FindAllStringSubmatch(string(helmErr), -1) {
			field := m[1][strings.LastIndex(m[1], "/")+1:]
			if !strings.Contains(msg, field) {
				lack = append(lack, strconv.Quote(field))
			}
		}
		if len(lack) > 0 {
			t.Errorf("refused, but not as helm refuses (fleetform's error lacks %s)\nfleetform: %s\nhelm: %s",
				strings.Join(lack, ", "), shorten(msg, 1500), helmErr)
			return
		}
		t.Logf("refused, as by helm.\nfleetform: %v\nhelm: %s", renderErr, helmErr)
		return
	}
	want, err := os.ReadFile(exp + ".yaml")
	if err != nil {
		t.Fatalf("no expected output (run scripts/render-expected.sh): %v", err)
	}
	if renderErr != nil {
		t.Errorf("render: %s", shorten(renderErr.Error(), 1500))
		return
	}
	wantObjs, wantDups, err := realObjects(map[string][]byte{"expected": want})
	if err != nil {
		t.Fatalf("expected output: %v", err)
	}
	ours := map[string][]byte{}
	for p, data := range rendered {
		if p == "kustomization.yaml" || strings.HasPrefix(p, app.TrackingDir+"/") {
			continue
		}
		ours[p] = data
	}
	gotObjs, gotDups, err := realObjects(ours)
	if err != nil {
		t.Errorf("fleetform's output: %v", err)
		return
	}
	if a.KustomizeDir != "" {
		release := a.Settings.ReleaseName
		if release == "" {
			release = a.Workload.Metadata.Name
		}
		for k := range gotObjs {
			if strings.HasPrefix(k, "v1/ConfigMap/") && strings.HasSuffix(k, "/"+release+"-values") {
				delete(gotObjs, k)
			}
		}
	}
	if msg := compareObjects(gotObjs, wantObjs, gotDups, wantDups); msg != "" {
		t.Errorf("%s", msg)
	}
}

// helmSchemaPath is a field in helm's schema error: "- at '/primary/persistence/enabled': …".
var helmSchemaPath = regexp.MustCompile(`(?m)^- at '([^']*)'`)

// realObjects parses the YAML documents of files into objects keyed by
// apiVersion/kind/namespace/name; keys found more than once are returned in dups.
func realObjects(files map[string][]byte) (map[string]any, []string, error) {
	objs := map[string]any{}
	var dups []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		dec := yaml.NewDecoder(bytes.NewReader(files[name]))
		for {
			var o any
			err := dec.Decode(&o)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", name, err)
			}
			if o == nil {
				continue
			}
			m, ok := o.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("%s: a document that is not a mapping: %s", name, shorten(fmt.Sprint(o), realMaxValue))
			}
			k := objectKey(m)
			if _, seen := objs[k]; seen {
				dups = append(dups, k)
			}
			objs[k] = m
		}
	}
	return objs, dups, nil
}

func objectKey(m map[string]any) string {
	meta, _ := m["metadata"].(map[string]any)
	return fmt.Sprintf("%v/%v/%v/%v", m["apiVersion"], m["kind"], str(meta["namespace"]), str(meta["name"]))
}

// withoutNamespace is a key without its namespace.
func withoutNamespace(key string) string {
	i := strings.LastIndex(key, "/")
	j := strings.LastIndex(key[:i], "/")
	return key[:j] + key[i:]
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// compareObjects reports the objects missing from got, the extra ones and the different
// ones, each with its key, and for a different one its first differing field paths.
func compareObjects(got, want map[string]any, gotDups, wantDups []string) string {
	var missing, extra, differ []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	// An object fleetform renders in another namespace (or none) is paired with helm's of
	// the same apiVersion, kind and name, when there is one such object on each side: it is
	// reported as different, so that its other differences show.
	moved := map[string]string{} // expected key -> fleetform's key
	for _, k := range missing {
		var cands []string
		for _, e := range extra {
			if withoutNamespace(e) == withoutNamespace(k) {
				cands = append(cands, e)
			}
		}
		var rivals int
		for _, m := range missing {
			if withoutNamespace(m) == withoutNamespace(k) {
				rivals++
			}
		}
		if len(cands) == 1 && rivals == 1 {
			moved[k] = cands[0]
		}
	}
	missing = slices.DeleteFunc(missing, func(k string) bool { _, ok := moved[k]; return ok })
	extra = slices.DeleteFunc(extra, func(k string) bool { return slices.Contains(slices.Collect(maps.Values(moved)), k) })
	diffs := map[string][]string{}
	for k, w := range want {
		gk, ok := k, true
		if m, isMoved := moved[k]; isMoved {
			gk = m
		} else {
			_, ok = got[k]
		}
		g := got[gk]
		if !ok || reflect.DeepEqual(g, w) {
			continue
		}
		label := k
		if gk != k {
			label = fmt.Sprintf("%s (fleetform: %s)", k, gk)
		}
		differ = append(differ, label)
		var paths []string
		diffValues("", g, w, &paths)
		diffs[label] = paths
	}
	if len(missing)+len(extra)+len(differ)+len(gotDups)+len(wantDups) == 0 {
		return ""
	}
	sort.Strings(missing)
	sort.Strings(extra)
	sort.Strings(differ)
	var b strings.Builder
	fmt.Fprintf(&b, "%d objects expected, %d rendered: %d missing, %d extra, %d different (%d of them in another namespace), %d equal\n",
		len(want), len(got), len(missing), len(extra), len(differ), len(moved), len(want)-len(missing)-len(differ))
	list := func(title string, keys []string, detail func(string)) {
		if len(keys) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s:\n", title)
		for i, k := range keys {
			if i == realMaxKeys {
				fmt.Fprintf(&b, "  … and %d more\n", len(keys)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", k)
			if detail != nil {
				detail(k)
			}
		}
	}
	list("missing (helm/kustomize has them, fleetform does not)", missing, nil)
	list("extra (fleetform only)", extra, nil)
	list("different (- fleetform, + helm/kustomize)", differ, func(k string) {
		for i, p := range diffs[k] {
			if i == realMaxPaths {
				fmt.Fprintf(&b, "      … and %d more fields\n", len(diffs[k])-i)
				break
			}
			fmt.Fprintf(&b, "      %s\n", p)
		}
	})
	list("duplicate keys in fleetform's output", gotDups, nil)
	list("duplicate keys in the expected output", wantDups, nil)
	return b.String()
}

// diffValues appends a line per field path where got and want differ.
func diffValues(path string, got, want any, out *[]string) {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		keys := slices.Sorted(maps.Keys(wm))
		for k := range gm {
			if _, ok := wm[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			g, gin := gm[k]
			w, win := wm[k]
			p := joinPath(path, k)
			switch {
			case !gin:
				*out = append(*out, fmt.Sprintf("%s: - (absent) + %s", p, show(w)))
			case !win:
				*out = append(*out, fmt.Sprintf("%s: - %s + (absent)", p, show(g)))
			default:
				diffValues(p, g, w, out)
			}
		}
		return
	}
	gl, gok := got.([]any)
	wl, wok := want.([]any)
	if gok && wok && len(gl) == len(wl) {
		for i := range wl {
			diffValues(fmt.Sprintf("%s[%d]", path, i), gl[i], wl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		*out = append(*out, fmt.Sprintf("%s: - %s + %s", path, show(got), show(want)))
	}
}

func joinPath(path, k string) string {
	if strings.ContainsAny(k, ".[]") {
		return fmt.Sprintf("%s[%q]", path, k)
	}
	if path == "" {
		return k
	}
	return path + "." + k
}

// show is a value on one line, shortened.
func show(v any) string {
	b, err := sigsyaml.Marshal(v)
	s := strings.TrimSpace(string(b))
	if err != nil {
		s = fmt.Sprint(v)
	}
	if strings.Contains(s, "\n") {
		j, err := sigsyaml.YAMLToJSON(b)
		if err == nil {
			s = string(j)
		}
	}
	return shorten(s, realMaxValue)
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkFluxBuild builds a target's folder as Flux's kustomize-controller does, without and
// with the target's namespace as targetNamespace: both must build, and with it every
// namespaced object must land in that namespace.
func checkFluxBuild(t *testing.T, files map[string][]byte, namespace string) {
	t.Helper()
	in := map[string][]byte{}
	for name, data := range files {
		in["target/"+name] = data
	}
	for _, target := range []string{"", namespace} {
		res, err := fluxbuild.Build(in, "target", target)
		if err != nil {
			t.Errorf("flux build: %v", err)
			continue
		}
		for _, r := range res {
			if target != "" && !r.GetGvk().IsClusterScoped() && r.GetNamespace() != target {
				t.Errorf("flux build with targetNamespace %s: %s is in namespace %q", target, r.CurId(), r.GetNamespace())
			}
		}
	}
}
