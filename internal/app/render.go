package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// TrackingDir is where each target's tracking files are, inside the target's folder.
const TrackingDir = ".github/tracking"

// Tracking files, as Kalypso names them, and fleetform's digest of a target's inputs.
const (
	PromotedCommitFile = TrackingDir + "/Promoted_Commit_Id"
	ConfigCommitFile   = TrackingDir + "/Config_Commit_Id"
	VersionFile        = TrackingDir + "/Version"
	ImageTagFile       = TrackingDir + "/Image_tag"
	DigestFile         = TrackingDir + "/Inputs_Digest"
)

// outputFormat changes when what fleetform writes for the same inputs changes.
const outputFormat = "fleetform-app/3"

// Inputs are everything a target is rendered from, except its config folder.
type Inputs struct {
	App    *App
	Config *EnvConfig
	// Vars are the variables substituted in values files (--var, VERSION and IMAGE_TAG from
	// Version and ImageTag, and the names the settings declare).
	Vars Vars
	// Set are Helm --set style values (key.path=value), the highest layer.
	Set               []string
	Version, ImageTag string
	// Regenerate writes new values of random functions instead of keeping the folder's.
	Regenerate bool
	// Sandbox, when set, renders charts in a worker process bounded in time and memory
	// (nil: in this process).
	Sandbox *Sandbox

	chartLayer *Layer
	setLayer   *Layer
	// chartValues is the chart's values.yaml after substitution, as Helm loads it.
	chartValues []byte
}

// NewInputs checks the variables and parses the layers every target shares.
func NewInputs(a *App, c *EnvConfig, vars map[string]string, set []string, version, imageTag string) (*Inputs, error) {
	vs, err := NewVars(vars, a.Settings.Variables, version, imageTag)
	if err != nil {
		return nil, err
	}
	in := &Inputs{App: a, Config: c, Vars: vs, Set: set, Version: version, ImageTag: imageTag}
	if a.chartValues != nil {
		if in.chartValues, err = Subst(a.ChartValuesFile(), a.chartValues, in.Vars); err != nil {
			return nil, err
		}
		l, err := ParseLayer(Source{Repo: "source", File: a.ChartValuesFile()}, a.chartValues, in.Vars)
		if err != nil {
			return nil, err
		}
		in.chartLayer = &l
	}
	if len(set) > 0 {
		m := map[string]any{}
		for _, s := range set {
			if err := strvals.ParseInto(s, m); err != nil {
				return nil, fmt.Errorf("--set %s: %w", s, err)
			}
		}
		var n yaml.Node
		if err := n.Encode(m); err != nil {
			return nil, err
		}
		in.setLayer = &Layer{Source: Source{Repo: "command line", File: "--set"}, root: &n}
	}
	return in, nil
}

// Compose merges the values of a target whose config folder is dir: the chart's defaults,
// each values.yaml from the config repository's root down to dir, then --set.
func (in *Inputs) Compose(dir string) (*Values, error) {
	var layers []Layer
	if in.chartLayer != nil {
		layers = append(layers, *in.chartLayer)
	}
	var errs []error
	for _, f := range in.Config.Chain(dir) {
		l, err := ParseLayer(Source{Repo: "config", File: f}, in.Config.File(f), in.Vars)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		layers = append(layers, l)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if in.setLayer != nil {
		layers = append(layers, *in.setLayer)
	}
	v, err := Merge(layers)
	if err != nil || in.App.ChartDir == "" {
		return v, err
	}
	v.helm, err = in.helmValues(dir)
	return v, err
}

// helmValues are the values above the chart's values.yaml as helm makes them from -f files
// and --set: each config values.yaml, lowest first, read as helm reads a values file and
// merged as helm merges them (a null is kept: Helm deletes the default it overrides), then
// the --set values.
func (in *Inputs) helmValues(dir string) (map[string]any, error) {
	vals := map[string]any{}
	for _, f := range in.Config.Chain(dir) {
		data, err := Subst(f, in.Config.File(f), in.Vars)
		if err != nil {
			return nil, err
		}
		m, err := chartutil.ReadValues(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		vals = mergeHelmValues(vals, m)
	}
	for _, s := range in.Set {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	return vals, nil
}

// mergeHelmValues merges b over a as helm merges its values files: mappings key by key,
// anything else (a null too) replaces.
func mergeHelmValues(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeHelmValues(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// Digest identifies what a target's folder holds when rendered from values: equal digests
// mean equal files (but for Config_Commit_Id, which is not part of it). A kustomize build
// substitutes the variables in the kustomizations it reads, so they are part of it; a
// chart's values files are the only files they are substituted in, and the values are.
func (in *Inputs) Digest(t Target, v *Values) string {
	h := sha256.New()
	data, _ := json.Marshal(v.Data)                          // sorted keys; the data came from YAML, it marshals
	settings, _ := json.Marshal(in.App.Settings.rendering()) // not the promotion gates: they change no file
	var vars string
	if in.App.KustomizeDir != "" {
		vars = in.Vars.key()
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00%s\x00", outputFormat, in.App.Digest, in.App.Commit,
		in.Version, in.ImageTag, settings, t.Name, t.Namespace, vars)
	h.Write(data)
	helm, _ := json.Marshal(v.helm)
	h.Write(helm)
	return hex.EncodeToString(h.Sum(nil))
}

// Render validates a target's values against the schema and renders its folder: one file
// per object, a kustomization.yaml listing them and the tracking files, by path in the
// folder. A chart that calls random functions is rendered three times, so that the folder
// knows what of which lines changes on its own (Folder.KeepCommitted).
func (in *Inputs) Render(ctx context.Context, t Target, v *Values) (*Folder, error) {
	if s := in.App.Schema; s != nil && s.File != in.App.chartSchemaFile() {
		if problems := s.Validate(v); len(problems) > 0 {
			return nil, &SchemaError{Target: t.Name, Problems: problems}
		}
	}
	files, err := in.renderFiles(ctx, t, v)
	if cse := (*chartSchemaError)(nil); errors.As(err, &cse) {
		// The chart's own schema, checked as Helm checks it: on the values Helm renders the
		// chart with (the subcharts' defaults, imported values).
		return nil, &SchemaError{Target: t.Name, Problems: sourced(cse.Problems, v)}
	}
	if err != nil {
		return nil, err
	}
	f := &Folder{Files: files}
	if in.App.random {
		others := make([]map[string][]byte, 2) // with three renders, a random value's ends rarely agree by chance
		for i := range others {
			if others[i], err = in.renderFiles(ctx, t, v); err != nil {
				return nil, err
			}
		}
		f.randomLines(others...)
	}
	return f, nil
}

// renderFiles renders a target's folder once.
func (in *Inputs) renderFiles(ctx context.Context, t Target, v *Values) (map[string][]byte, error) {
	var objs []Object
	var err error
	if in.App.KustomizeDir != "" {
		objs, err = in.App.renderKustomize(ctx, v, in.Vars, t.Name, in.Sandbox)
	} else {
		objs, err = in.App.renderHelm(ctx, in.chartValues, v.helm, t, in.helmRender(t), in.Sandbox)
	}
	if err != nil {
		return nil, err
	}
	files := make(map[string][]byte, len(objs)+6)
	var k strings.Builder
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	if len(objs) == 0 {
		k.Reset()
		k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n")
	}
	for _, o := range objs {
		files[o.File] = o.Data
		fmt.Fprintf(&k, "- %s\n", o.File)
	}
	files["kustomization.yaml"] = []byte(k.String())
	track := map[string]string{PromotedCommitFile: in.App.Commit, ConfigCommitFile: in.Config.Commit,
		VersionFile: in.Version, ImageTagFile: in.ImageTag, DigestFile: in.Digest(t, v)}
	for _, f := range slices.Sorted(maps.Keys(track)) {
		if track[f] != "" {
			files[f] = []byte(track[f] + "\n")
		}
	}
	return files, nil
}

// helmRender is how target t's chart is rendered: the release, the target's namespace (or
// "default", as helm's), its capabilities and what of the chart is written.
func (in *Inputs) helmRender(t Target) helmRender {
	s := in.App.Settings
	ns := t.Namespace
	if ns == "" {
		ns = "default"
	}
	return helmRender{Release: in.App.Release(), Namespace: ns, Capabilities: s.For(t),
		IncludeCRDs: s.IncludeCRDs == nil || *s.IncludeCRDs, IncludeTests: s.IncludeTests, KeyedSchema: true}
}

// SchemaError is a target whose values the schema refuses: nothing is written for it.
type SchemaError struct {
	Target   string
	Problems []string
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("target %s: the values break the schema, nothing written for it:\n  %s", e.Target, strings.Join(e.Problems, "\n  "))
}

// Files lists the values files a target whose config folder is dir is composed from,
// lowest first.
func (in *Inputs) Files(dir string) []string {
	var out []string
	if in.chartLayer != nil {
		out = append(out, "source "+in.chartLayer.Source.File)
	}
	for _, f := range in.Config.Chain(dir) {
		out = append(out, "config "+f)
	}
	if in.setLayer != nil {
		out = append(out, "command line --set")
	}
	return out
}
