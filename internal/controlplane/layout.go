package controlplane

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/repourl"
)

// Layout is how a control-plane repository maps to "common content + environment content".
type Layout string

// Layouts.
const (
	// LayoutAuto picks kalypso when the repository's main branch has .environments/,
	// folder otherwise.
	LayoutAuto Layout = ""
	// LayoutKalypso: branch main holds common content and .environments/; one branch per
	// environment holds its own content and base-repo.yaml.
	LayoutKalypso Layout = "kalypso"
	// LayoutFolder: everything outside environments/ is common; environments/<env>/ is the
	// environment's own content.
	LayoutFolder Layout = "folder"
)

// environmentsDir is the folder of environment folders in the folder layout.
const environmentsDir = "environments/"

// kalypsoEnvironmentsDir holds the Environment objects on main in the Kalypso layout.
const kalypsoEnvironmentsDir = ".environments/"

// Options configure how a control plane is opened.
type Options struct {
	// RepoMap maps repository URLs to local paths.
	RepoMap RepoMap
	// Layout forces a layout; empty detects it.
	Layout Layout
	// Ref is the tip to read in the folder layout (default HEAD), or the main branch in the
	// Kalypso layout (default main).
	Ref string
	// CommonRef, when set, overrides the BaseRepo pin: common content is read at this ref.
	CommonRef string
	// GitOps names, per environment, the GitOps repository (a path or URL) to use instead of
	// the environment's GitOpsRepo (the operator's config file).
	GitOps map[string]string
	// Logger receives progress messages; nil discards them.
	Logger *slog.Logger
	// Credentials choose what goes with each HTTP(S) fetch (see Credentials); nil sends none.
	Credentials Credentials
}

// ControlPlane is an opened control-plane repository.
type ControlPlane struct {
	repo   *Repo
	repos  *Repos
	layout Layout
	opts   Options
}

// Open opens the control plane at location (a directory, a local git repository or a URL).
func Open(ctx context.Context, location string, opts Options) (*ControlPlane, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	repos := newLoadRepos(opts.RepoMap, opts.Credentials, opts.Logger)
	repo, err := repos.Open(ctx, location)
	if err != nil {
		return nil, fmt.Errorf("open control plane: %w", err)
	}
	cp := &ControlPlane{repo: repo, repos: repos, layout: opts.Layout, opts: opts}
	if cp.layout == LayoutAuto {
		cp.layout = cp.detectLayout()
	}
	if cp.layout == LayoutKalypso && !repo.IsGit() {
		return nil, fmt.Errorf("open control plane %s: the Kalypso layout needs a git repository (one branch per environment)", location)
	}
	return cp, nil
}

// ErrNoEnvironment is a control plane that declares no environment: nothing can be
// scheduled or rendered, and the error says how to start one.
var ErrNoEnvironment = errors.New("the control plane declares no environment: start one with `fleetform init DIR` " +
	"(dev → stage → prod), or add one with `fleetform add environment NAME`")

// SeveralEnvironmentsError is OnlyEnvironment's answer when the control plane declares
// several environments: which one must be said.
type SeveralEnvironmentsError struct {
	// Declared names them, sorted.
	Declared []string
}

func (e *SeveralEnvironmentsError) Error() string {
	return "the control plane declares " + strings.Join(e.Declared, ", ") + ": name the environment"
}

// EveryEnvironment is the key of Options.GitOps that names the GitOps repository of every
// environment the map does not name.
const EveryEnvironment = "*"

// GitOpsOverride returns the GitOps repository the options name for env, or "".
func (cp *ControlPlane) GitOpsOverride(env string) string {
	if g, ok := cp.opts.GitOps[env]; ok {
		return g
	}
	return cp.opts.GitOps[EveryEnvironment]
}

// Logger returns the logger the control plane was opened with.
func (cp *ControlPlane) Logger() *slog.Logger { return cp.opts.Logger }

// Layout returns the layout in use.
func (cp *ControlPlane) Layout() Layout { return cp.layout }

// Repo returns the control-plane repository.
func (cp *ControlPlane) Repo() *Repo { return cp.repo }

func (cp *ControlPlane) detectLayout() Layout {
	if !cp.repo.IsGit() {
		return LayoutFolder
	}
	t, err := cp.repo.Tree(cp.mainRef())
	if err != nil {
		return LayoutFolder
	}
	files, err := t.Files()
	if err != nil {
		return LayoutFolder
	}
	for _, f := range files {
		if strings.HasPrefix(f, environmentsDir) {
			return LayoutFolder
		}
	}
	for _, f := range files {
		if strings.HasPrefix(f, kalypsoEnvironmentsDir) {
			return LayoutKalypso
		}
	}
	return LayoutFolder
}

// MainBranch is the Kalypso layout's main branch: --ref, else main, else HEAD.
func (cp *ControlPlane) MainBranch() string { return cp.mainRef() }

// mainRef is the Kalypso layout's main branch: --ref, else main, else HEAD.
func (cp *ControlPlane) mainRef() string {
	if cp.opts.Ref != "" {
		return cp.opts.Ref
	}
	if cp.repo.HasBranch("main") {
		return "main"
	}
	return "HEAD"
}

// tipRef is where Environments are declared: the main branch in the Kalypso layout, the
// tip (--ref, else HEAD) in the folder layout, where environment content is read too.
func (cp *ControlPlane) tipRef() string {
	if cp.layout == LayoutKalypso {
		return cp.mainRef()
	}
	return cp.opts.Ref
}

// EnvironmentInfo is an environment as declared at the tip.
type EnvironmentInfo struct {
	Name string
	// Object is the Environment document, nil when the folder layout has only the folder.
	Object *Environment
}

// Environments lists the environments declared at the tip, sorted by name, with the problems
// found in their declarations.
func (cp *ControlPlane) Environments(ctx context.Context) ([]EnvironmentInfo, []Diagnostic, error) {
	envs, decodeDiags, checkDiags, err := cp.environments(ctx, nil)
	return envs, append(decodeDiags, checkDiags...), err
}

// environments lists the environments declared at the tip. decodeDiags are the problems of
// the files read (in the folder layout, only those of Environment documents), checkDiags
// those of the declarations themselves (misplaced or duplicate Environments).
func (cp *ControlPlane) environments(ctx context.Context, rd *reads) (envs []EnvironmentInfo, decodeDiags, checkDiags []Diagnostic, err error) {
	tip, err := rd.tree(cp.repo, "", cp.tipRef())
	if err != nil {
		return nil, nil, nil, err
	}
	root := environmentsDir
	if cp.layout == LayoutKalypso {
		root = kalypsoEnvironmentsDir
	}
	docs, diags, err := section{tree: tip, root: root, rootExempt: true}.read(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, d := range diags {
		switch {
		case d.Kind == v1alpha1.KindEnvironment:
			decodeDiags = append(decodeDiags, d)
		case cp.layout == LayoutKalypso:
			// .environments/ also holds onboarding playbooks, lists and other tools' objects:
			// not read, and never in the way of the environments.
			d.Severity = SeverityWarning
			d.Message = "not read: " + d.Message
			d.Hint = "only Environment documents are read in " + kalypsoEnvironmentsDir + "; list other files in .sourceignore"
			decodeDiags = append(decodeDiags, d)
		}
		// In the folder layout environments/ holds every environment's content: its other
		// problems belong to the environment that reads it.
	}
	byName := map[string]*EnvironmentInfo{} // nil: a folder with an invalid name
	if cp.layout == LayoutFolder {
		if checkDiags, err = environmentFolders(tip, byName); err != nil {
			return nil, nil, nil, err
		}
	}
	if cp.layout == LayoutFolder {
		// Environments may also be declared anywhere in the common content (the folder-layout
		// twin of Kalypso's .environments/): read at the tip too, after the folders' own.
		common, diags, err := section{tree: tip, exclude: []string{environmentsDir}, mentions: v1alpha1.KindEnvironment}.read(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		docs = append(docs, common...)
		for _, d := range diags {
			if d.Kind == v1alpha1.KindEnvironment {
				decodeDiags = append(decodeDiags, d)
			}
		}
	}
	for _, d := range docs {
		if diag := cp.declare(d, byName); diag != nil {
			checkDiags = append(checkDiags, *diag)
		}
	}
	envs = make([]EnvironmentInfo, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		if byName[n] != nil {
			envs = append(envs, *byName[n])
		}
	}
	return envs, decodeDiags, checkDiags, nil
}

// environmentFolders records the environments of the folder layout: the folders of
// environments/ holding YAML that Flux would deliver.
func environmentFolders(tip Tree, byName map[string]*EnvironmentInfo) ([]Diagnostic, error) {
	files, err := section{tree: tip, root: environmentsDir}.files()
	if err != nil {
		return nil, err
	}
	var diags []Diagnostic
	for _, f := range files {
		rest := strings.TrimPrefix(f, environmentsDir)
		name, _, inFolder := strings.Cut(rest, "/")
		if _, seen := byName[name]; seen {
			continue
		}
		switch errs := validation.IsDNS1123Label(name); {
		case !inFolder:
			diags = append(diags, Diagnostic{Severity: SeverityWarning, File: f,
				Message: "not read: a file directly in environments/ belongs to no environment",
				Hint:    "move it into environments/<env>/, or out of environments/ to make it common"})
		case len(errs) > 0:
			diags = append(diags, Diagnostic{Severity: SeverityError, File: environmentsDir + name + "/",
				Message: fmt.Sprintf("invalid environment name %q: %s", name, strings.Join(errs, "; ")),
				Hint:    "environment names are namespace prefixes: use lowercase letters, digits and '-'"})
			byName[name] = nil
		default:
			byName[name] = &EnvironmentInfo{Name: name}
		}
	}
	return diags, nil
}

// declare records an Environment document, or says why it does not declare one.
func (cp *ControlPlane) declare(d document, byName map[string]*EnvironmentInfo) *Diagnostic {
	var diag Diagnostic
	env, ok := d.object.(*v1alpha1.Environment)
	switch {
	case d.broken:
		return nil // reported when decoded
	case !ok && cp.layout == LayoutKalypso:
		diag = d.source.Warn("kind", "not read: only Environment documents are read in "+kalypsoEnvironmentsDir,
			"move it elsewhere, or list it in .sourceignore")
	case !ok:
		return nil // the environment's content, read when it is loaded
	case cp.layout == LayoutFolder && strings.HasPrefix(d.source.File, environmentsDir) &&
		!strings.HasPrefix(d.source.File, environmentsDir+d.name+"/"):
		diag = d.source.Diag("metadata.name", fmt.Sprintf("Environment %q must be in %s%s/ or in the common content", d.name, environmentsDir, d.name),
			"move the file or rename the environment")
	case len(validation.IsDNS1123Label(d.name)) > 0:
		if cp.layout == LayoutFolder && strings.HasPrefix(d.source.File, environmentsDir) {
			return nil // its folder is reported
		}
		diag = d.source.Diag("metadata.name", fmt.Sprintf("invalid environment name %q: %s", d.name,
			strings.Join(validation.IsDNS1123Label(d.name), "; ")), "environment names are namespace prefixes: use lowercase letters, digits and '-'")
	case byName[d.name] != nil && byName[d.name].Object != nil:
		diag = d.source.Diag("metadata.name", fmt.Sprintf("duplicate Environment %q: already defined at %s",
			d.name, where(byName[d.name].Object.Source)), "")
	default:
		byName[d.name] = &EnvironmentInfo{Name: d.name, Object: &Environment{env, d.source}}
		return nil
	}
	return &diag
}

// OnlyEnvironment names the environment the control plane declares: ErrNoEnvironment when it
// declares none, a SeveralEnvironmentsError when it declares several.
func (cp *ControlPlane) OnlyEnvironment(ctx context.Context) (string, error) {
	envs, _, err := cp.Environments(ctx)
	switch {
	case err != nil:
		return "", err
	case len(envs) == 0:
		return "", ErrNoEnvironment
	case len(envs) > 1:
		names := make([]string, 0, len(envs))
		for _, e := range envs {
			names = append(names, e.Name)
		}
		return "", &SeveralEnvironmentsError{Declared: names}
	}
	return envs[0].Name, nil
}

// Load reads everything environment env is rendered from.
func (cp *ControlPlane) Load(ctx context.Context, env string) (*Snapshot, error) {
	rd := &reads{}
	envs, decodeDiags, checkDiags, err := cp.environments(ctx, rd)
	if err != nil {
		return nil, fmt.Errorf("list environments: %w", err)
	}
	var info *EnvironmentInfo
	names := make([]string, 0, len(envs))
	for i := range envs {
		names = append(names, envs[i].Name)
		if envs[i].Name == env {
			info = &envs[i]
		}
	}
	if info == nil {
		err := fmt.Errorf("environment %q is not declared; declared: %s%s", env, strings.Join(names, ", "), DidYouMean(env, names))
		if len(names) == 0 {
			err = fmt.Errorf("environment %q is not declared: %w", env, ErrNoEnvironment)
		}
		var problems []error
		for _, d := range append(decodeDiags, checkDiags...) {
			if d.Severity == SeverityError {
				problems = append(problems, d)
			}
		}
		if len(problems) > 0 {
			err = fmt.Errorf("%w; problems in the environment declarations:\n%w", err, errors.Join(problems...))
		}
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cp.opts.Logger.DebugContext(ctx, "loading environment", "environment", env, "layout", string(cp.layout))
	b := newBuilder(env, cp.layout)
	b.reads = rd
	b.snap.EnvironmentObject = info.Object
	b.snap.DeclaredEnvironments = names
	if cp.layout == LayoutKalypso {
		// The folder layout reads the environment's own folder again, with its problems.
		b.snap.Diagnostics = append(b.snap.Diagnostics, decodeDiags...)
		b.snap.Diagnostics = append(b.snap.Diagnostics, checkDiags...)
		err = cp.loadKalypso(ctx, b, info)
	} else {
		b.snap.Diagnostics = append(b.snap.Diagnostics, checkDiags...)
		err = cp.loadFolder(ctx, b, info)
	}
	if err != nil {
		return nil, err
	}
	cp.loadBaseRepos(ctx, b)
	cp.loadRegistrations(ctx, b)
	if err := ctx.Err(); err != nil {
		return nil, err // stopped: what was read is incomplete
	}
	b.snap.Inputs = rd.sorted()
	return b.snap, nil
}

// loadKalypso reads the environment branch at its tip and main at the BaseRepo pin.
func (cp *ControlPlane) loadKalypso(ctx context.Context, b *builder, info *EnvironmentInfo) error {
	ref := v1alpha1.RepoRef{Branch: info.Name, Path: "."}
	if info.Object != nil {
		spec := info.Object.Spec.ControlPlane
		if spec.Branch != "" {
			ref.Branch = spec.Branch
		}
		if spec.Path != "" {
			ref.Path = spec.Path
		}
		ref.Repo = spec.Repo
	}
	envRepo, name, err := cp.contentRepo(ctx, ref.Repo)
	if err != nil {
		return err
	}
	envTree, err := b.reads.tree(envRepo, name, ref.Branch)
	if err != nil {
		return fmt.Errorf("environment %s: branch %q: %w", info.Name, ref.Branch, err)
	}
	b.snap.Revisions.Environment = envTree.Revision()
	if err := cp.addSection(ctx, b, section{tree: envTree, root: ref.Path}, fromEnvironment); err != nil {
		return err
	}
	base := v1alpha1.BaseRepoSpec{RepoRef: v1alpha1.RepoRef{Branch: cp.mainRef(), Path: "."}}
	if br := b.snap.BaseRepo; br != nil {
		base = br.Spec
		if base.Branch == "" {
			base.Branch = cp.mainRef()
		}
	}
	return cp.addCommon(ctx, b, base, []string{".environments/"})
}

// loadFolder reads environments/<env>/ at the tip and the rest at the BaseRepo pin.
func (cp *ControlPlane) loadFolder(ctx context.Context, b *builder, info *EnvironmentInfo) error {
	tip, err := b.reads.tree(cp.repo, "", cp.opts.Ref)
	if err != nil {
		return err
	}
	b.snap.Revisions.Environment = tip.Revision()
	envDir := environmentsDir + info.Name + "/"
	if err := cp.addSection(ctx, b, section{tree: tip, root: envDir}, fromEnvironment); err != nil {
		return err
	}
	base := v1alpha1.BaseRepoSpec{RepoRef: v1alpha1.RepoRef{Path: "."}}
	if br := b.snap.BaseRepo; br != nil {
		base.Commit = br.Spec.Commit
		if br.Spec.Repo != "" && cp.repos.Mapped(br.Spec.Repo) {
			base.Repo = br.Spec.Repo
		}
	}
	if base.Commit == "" && cp.opts.CommonRef == "" {
		// Unpinned: the common content of the tip, recorded as the commit that last changed it
		// (a pin of another environment moves the tip, not the common content).
		base.Branch = cp.opts.Ref
		if c, err := cp.lastCommonChangeAt(cp.opts.Ref); err == nil && base.Repo == "" {
			base.Branch = c
		}
	}
	return cp.addCommon(ctx, b, base, []string{environmentsDir})
}

// addCommon reads the common (promotable) content at the pin, or at the CommonRef override.
func (cp *ControlPlane) addCommon(ctx context.Context, b *builder, base v1alpha1.BaseRepoSpec, exclude []string) error {
	repo, name, err := cp.contentRepo(ctx, base.Repo)
	if err != nil {
		return err
	}
	ref, pinned := base.Branch, false
	if base.Commit != "" {
		ref, pinned = base.Commit, true
	}
	if cp.opts.CommonRef != "" {
		ref, pinned = cp.opts.CommonRef, true
	}
	tree, err := b.reads.tree(repo, name, ref)
	if err != nil {
		if cp.opts.CommonRef != "" {
			return fmt.Errorf("common content at --common-ref %q: %w", ref, err)
		}
		if pinned && b.snap.BaseRepo != nil {
			d := b.snap.BaseRepo.Source.Diag("spec.commit", fmt.Sprintf("pinned commit %s is not in %s", ref, repo.Location),
				"fetch the commit into the repository, or promote an existing commit")
			return &DiagnosticError{Diagnostic: d}
		}
		return fmt.Errorf("common content at %q: %w", ref, err)
	}
	b.snap.Revisions.Common, b.snap.Revisions.Pinned = tree.Revision(), pinned && repo.IsGit()
	if !repo.IsGit() && base.Commit != "" && cp.opts.CommonRef == "" && b.snap.BaseRepo != nil {
		b.diag(b.snap.BaseRepo.Source.Warn("spec.commit", fmt.Sprintf("pin %s ignored: %s is not a git repository", base.Commit, repo.Location),
			"common content is read as it is"))
	}
	return cp.addSection(ctx, b, section{tree: tree, root: base.Path, exclude: exclude}, fromCommon)
}

// contentRepo opens the repository a control-plane reference names: the mapped location
// when url is mapped, else the control plane itself (named "" in Snapshot.Inputs).
func (cp *ControlPlane) contentRepo(ctx context.Context, url string) (repo *Repo, name string, err error) {
	if url != "" && cp.repos.Mapped(url) {
		repo, err = cp.repos.Open(ctx, url)
		return repo, url, err
	}
	return cp.repo, "", nil
}

func (cp *ControlPlane) addSection(ctx context.Context, b *builder, s section, from origin) error {
	docs, diags, err := s.read(ctx)
	if err != nil {
		return err
	}
	b.snap.Diagnostics = append(b.snap.Diagnostics, diags...)
	for _, d := range docs {
		b.add(d, from, nil)
	}
	return nil
}

// loadRegistrations reads the Workloads of every WorkloadRegistration. A registration
// whose repository cannot be read is reported and recorded in FailedSources.
func (cp *ControlPlane) loadRegistrations(ctx context.Context, b *builder) {
	regs := append([]*WorkloadRegistration(nil), b.snap.Registrations...)
	sort.Slice(regs, func(i, j int) bool { return regs[i].Metadata.Name < regs[j].Metadata.Name })
	for _, reg := range regs {
		if ctx.Err() != nil {
			return // the caller sees ctx.Err()
		}
		ref := reg.Spec.Workload
		fail := func(err error) {
			b.diag(reg.Source.Diag("spec.workload.repo", fmt.Sprintf("cannot read workloads from %s: %v", repourl.Redact(ref.Repo), err),
				"check the URL and credentials, or map it with --repo-map URL=PATH"))
			b.snap.FailedSources = append(b.snap.FailedSources, "registration/"+reg.Metadata.Name)
		}
		repo, err := cp.repos.Open(ctx, ref.Repo)
		if err != nil {
			fail(err)
			continue
		}
		tree, err := b.reads.tree(repo, ref.Repo, ref.Branch)
		if err != nil {
			fail(err)
			continue
		}
		shown := repourl.Redact(ref.Repo) // credentials never reach a source or a message
		docs, diags, err := section{tree: tree, root: ref.Path, repo: shown}.read(ctx)
		if err != nil {
			fail(err)
			continue
		}
		if len(docs) == 0 && len(diags) == 0 && folderMissing(tree, ref.Path) {
			b.diag(reg.Source.Diag("spec.workload.path", fmt.Sprintf("%s has no folder %s on %s: its workloads cannot be read", shown, ref.Path,
				cmp.Or(ref.Branch, "its default branch")),
				"correct spec.workload.path (until then, what the registration's workloads deployed stays); to remove them, remove the registration"))
			b.snap.FailedSources = append(b.snap.FailedSources, "registration/"+reg.Metadata.Name)
			continue
		}
		b.snap.Diagnostics = append(b.snap.Diagnostics, diags...)
		failed := map[string]bool{}
		for _, d := range diags {
			if f := "file/" + shown + "/" + path.Clean(d.File); d.Severity == SeverityError && !failed[f] {
				failed[f] = true
				b.snap.FailedSources = append(b.snap.FailedSources, f)
			}
		}
		for _, d := range docs {
			b.add(d, fromWorkloadRepo, reg)
		}
	}
}

// folderMissing reports whether a tree has no file at all under the folder dir (the whole
// tree, ".", is never missing); a tree that cannot be listed is not said to miss it.
func folderMissing(t Tree, dir string) bool {
	root := cleanDir(dir)
	if root == "" {
		return false
	}
	files, err := t.Files()
	if err != nil {
		return false
	}
	return !slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, root) })
}

// Locate returns where a repository URL is read from: its --repo-map entry, else the URL.
func (cp *ControlPlane) Locate(url string) string {
	if p, ok := cp.opts.RepoMap.Lookup(url); ok {
		return p
	}
	return url
}
