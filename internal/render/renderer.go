package render

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"maps"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fleetform/fleetform/api/v1alpha1"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/schedule"
)

// Version is folded into every input digest: bump it when rendering changes, so that an
// incremental apply re-renders everything once.
const Version = "fleetform-render/3"

// maxErrorsPerTemplate bounds the diagnostics reported for one failing template.
const maxErrorsPerTemplate = 10

// Output is the rendered GitOps tree of one environment, relative to the GitOps path.
type Output struct {
	Environment string
	// ClusterTypes are the names of every cluster type (each gets a folder and a README).
	ClusterTypes []string
	// Assignments are in schedule order; failed ones have Files == nil.
	Assignments []Assignment
	// PromotedCommit is the pinned common-content commit, written to PromotedCommitFile; ""
	// when no commit is pinned (Kalypso writes no such file then).
	PromotedCommit string
	// CommonCommit is the commit the common content was read at, pinned or not; "" when the
	// control plane is not a git repository.
	CommonCommit string
	Diagnostics  []controlplane.Diagnostic
	// Stopped is set when Options.Stop ended the work early: the output is incomplete and
	// must not be written.
	Stopped bool
}

// Assignment is one scheduled assignment and what was rendered for it.
type Assignment struct {
	*schedule.Assignment
	Config *compose.Config
	// Files is nil when the assignment failed (see Err).
	Files *Files
	Err   error
	// InputDigest identifies everything the files are rendered from: equal digests mean
	// byte-identical files.
	InputDigest string
	// Waiting holds the schema violations of an assignment of an environment whose
	// configSchemaPolicy is warn (as warnings): it is rendered without its platform config
	// (Files.KeepConfig: the last valid one stays), waiting for platform configuration.
	Waiting []controlplane.Diagnostic
}

// Dir is the assignment's folder: <clusterType>/<deploymentTarget>.
func (a *Assignment) Dir() string { return a.ClusterType + "/" + a.DeploymentTarget }

// Options tune Render.
type Options struct {
	// Workers is the number of goroutines; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called (from several goroutines) with the number of
	// assignments done so far and the total.
	Progress func(done, total int)
	// Limits bound each assignment's rendering; zero fields take their defaults.
	Limits Limits
	// Stop, when closed, stops the work: no assignment is started after it (the output is
	// then incomplete and Output.Stopped is set). A context's Done channel fits.
	Stop <-chan struct{}
	// textTemplateOnly runs every manifest with text/template, not the fast executor
	// (tests compare the two).
	textTemplateOnly bool
}

// Render composes, validates and renders every assignment. An assignment whose config is
// invalid or whose template fails is reported and left out; the others are rendered.
func Render(s *controlplane.Snapshot, sched *schedule.Result, opts Options) *Output {
	r := NewRenderer(s, sched, opts)
	r.Prepare()
	return r.Render(func(*Assignment) bool { return true })
}

// Renderer renders one environment in two steps, so that a caller can render only what
// changed: Prepare composes every assignment's config and computes its input digest (cheap);
// Render validates and renders the assignments it selects.
type Renderer struct {
	out          *Output
	r            *renderer
	batched      atomic.Int64 // assignments done by RenderBatch
	clusterTypes map[string]*controlplane.ClusterType
	basesMu      sync.Mutex
	bases        map[string][]byte // typeBase by cluster type
	build        string            // BuildStamp
}

// NewRenderer parses the templates and prepares the output; nothing is composed yet.
func NewRenderer(s *controlplane.Snapshot, sched *schedule.Result, opts Options) *Renderer {
	out := &Output{Environment: s.Environment, PromotedCommit: promotedCommit(s), CommonCommit: s.Revisions.Common}
	for _, ct := range sched.ClusterTypes {
		out.ClusterTypes = append(out.ClusterTypes, ct.Metadata.Name)
	}
	engine := NewEngine(s)
	engine.Limits, engine.noFast = opts.Limits, opts.textTemplateOnly
	out.Diagnostics = append(out.Diagnostics, engine.Diagnostics...)
	types, diags := resolveTypes(engine, sched)
	out.Diagnostics = append(out.Diagnostics, diags...)
	out.Assignments = make([]Assignment, len(sched.Assignments))
	for i := 0; i < len(out.Assignments); i += preemptChunk {
		pointAt(out.Assignments[i:min(i+preemptChunk, len(out.Assignments))], sched.Assignments[i:])
	}
	policy, d := s.SchemaPolicy()
	if d != nil {
		out.Diagnostics = append(out.Diagnostics, *d)
	}
	r := &renderer{env: s.Environment, engine: engine, composer: compose.New(s), types: types, opts: opts,
		broken: s.Broken, targets: targetDigests(s.DeploymentTargets), warn: policy == v1alpha1.ConfigSchemaWarn,
		sharedUsers: sharedHostUsers(s.Environment, types, sched.Assignments)}
	return &Renderer{out: out, r: r, clusterTypes: clusterTypesByName(sched.ClusterTypes), build: BuildStamp()}
}

// preemptChunk is how many pointers a loop over a whole fleet stores between two calls.
// A loop that only stores pointers has no point where the collector can stop it: when a
// collection starts meanwhile, the collector signals the goroutine and spins until the
// loop ends, slowing it several times over. A call every chunk is such a point.
const preemptChunk = 4096

// pointAt points each of as at the schedule's assignment of the same index.
//
//go:noinline
func pointAt(as []Assignment, sched []schedule.Assignment) {
	for i := range as {
		as[i].Assignment = &sched[i]
	}
}

// Prepare composes every assignment's config and computes its InputDigest. Assignments that
// cannot be rendered at all (a missing template, a broken config source) get their Err.
func (rr *Renderer) Prepare() {
	rr.r.run(rr.out.Assignments, nil, rr.r.prepare)
}

// Render validates and renders the prepared assignments selected (and not failed), and
// returns the output; the others keep Files == nil.
func (rr *Renderer) Render(selected func(*Assignment) bool) *Output {
	rr.r.run(rr.out.Assignments, rr.r.opts.Progress, func(a *Assignment) {
		if a.Err == nil && selected(a) {
			rr.r.render(a)
		}
	})
	rr.out.Diagnostics = append(rr.out.Diagnostics, rr.r.diagnostics(rr.out.Assignments)...)
	rr.out.Stopped = rr.r.stopped()
	return rr.out
}

// RenderBatch validates and renders the prepared assignments of as that are selected (and
// not failed), on the renderer's workers, so that a caller can write each batch (a cluster
// type's) before rendering the next: only one batch's files are in memory at a time.
// Progress counts every assignment of as, selected or not. It reports false when the work
// was stopped. Finish completes the output after the last batch.
func (rr *Renderer) RenderBatch(as []*Assignment, selected func(i int) bool) bool {
	rr.r.runEach(len(as), rr.progress, func(i int) {
		if a := as[i]; a.Err == nil && selected(i) {
			rr.r.render(a)
		}
	})
	return !rr.r.stopped()
}

// progress reports the assignments done by every batch so far, as Render does: once per
// progressChunk assignments, and once all are done.
func (rr *Renderer) progress(chunk int) {
	if rr.r.opts.Progress == nil {
		return
	}
	done, total := rr.batched.Add(int64(chunk)), int64(len(rr.out.Assignments))
	if (done-int64(chunk))/progressChunk != done/progressChunk || done == total {
		rr.r.opts.Progress(int(done), int(total))
	}
}

// Finish completes the output of RenderBatch: the diagnostics of every assignment, and
// whether the work was stopped.
func (rr *Renderer) Finish() *Output {
	rr.out.Diagnostics = append(rr.out.Diagnostics, rr.r.diagnostics(rr.out.Assignments)...)
	rr.out.Stopped = rr.r.stopped()
	return rr.out
}

// Output returns the output as it is so far.
func (rr *Renderer) Output() *Output { return rr.out }

func promotedCommit(s *controlplane.Snapshot) string {
	switch {
	case s.Revisions.Pinned:
		return s.Revisions.Common
	case s.BaseRepo != nil && s.BaseRepo.Spec.Commit != "":
		return s.BaseRepo.Spec.Commit // pinned, but read as it is (not a git repository)
	}
	return "" // the environment follows the tip: nothing was promoted
}

// typeTemplates is a cluster type's resolved templates, or why it cannot render.
type typeTemplates struct {
	ts      *ClusterTypeTemplates
	problem string
	digest  []byte
}

func resolveTypes(e *Engine, sched *schedule.Result) (map[string]*typeTemplates, []controlplane.Diagnostic) {
	out := map[string]*typeTemplates{}
	var diags []controlplane.Diagnostic
	counts := map[string]int{}
	for _, a := range sched.Assignments {
		counts[a.ClusterType]++
	}
	for _, ct := range sched.ClusterTypes {
		ts, problems := e.TemplatesFor(ct.Spec)
		tt := &typeTemplates{ts: ts}
		for _, p := range problems {
			field, msg := SplitField(p)
			hint := fmt.Sprintf("define a Template with that name or use a built-in one (%s)", joinNames(e))
			if strings.HasPrefix(msg, missingTemplateField) {
				hint = fmt.Sprintf("set it to a Template of the control plane or a built-in one (%s)", joinNames(e))
			}
			if n := counts[ct.Metadata.Name]; n > 0 {
				msg = fmt.Sprintf("%s; %d assignment(s) on this cluster type are not rendered", msg, n)
			}
			diags = append(diags, ct.Source.Diag(field, msg, hint))
			tt.problem = "cluster type " + ct.Metadata.Name + ": " + p
		}
		if tt.problem == "" {
			for _, m := range ts.TypeMismatches() {
				field, msg := SplitField(m)
				diags = append(diags, ct.Source.Warn(field, msg, ""))
			}
			h := sha256.New()
			for _, t := range []*Template{ts.Reconciler, ts.Namespace, ts.Config} {
				h.Write(t.digest[:])
			}
			tt.digest = h.Sum(nil)
		}
		out[ct.Metadata.Name] = tt
	}
	return out, diags
}

func joinNames(e *Engine) string {
	var b []byte
	for _, n := range e.Names() {
		if len(n) > len(BuiltinPrefix) && n[:len(BuiltinPrefix)] == BuiltinPrefix {
			if len(b) > 0 {
				b = append(b, ", "...)
			}
			b = append(b, n...)
		}
	}
	return string(b)
}

// progressChunk is how many assignments a worker takes at a time (and reports done).
const progressChunk = 64

// renderer runs the per-assignment work on a pool of goroutines.
type renderer struct {
	env      string
	engine   *Engine
	composer *compose.Composer
	types    map[string]*typeTemplates
	opts     Options
	broken   []controlplane.Broken
	warn     bool // configSchemaPolicy: warn

	targets map[*controlplane.DeploymentTarget][]byte // every target's digest (targetDigests); read only
	// sharedUsers are the assignments that would share an OS user (sharedHostUsers); read only.
	sharedUsers map[*schedule.Assignment]error
}

// stopped reports whether Options.Stop is closed.
func (r *renderer) stopped() bool {
	select {
	case <-r.opts.Stop:
		return true
	default:
		return false
	}
}

func (r *renderer) run(as []Assignment, progress func(done, total int), fn func(*Assignment)) {
	var done atomic.Int64
	r.runEach(len(as), func(chunk int) {
		if progress != nil {
			progress(int(done.Add(int64(chunk))), len(as))
		}
	}, func(i int) { fn(&as[i]) })
}

// runEach calls fn(0) .. fn(n-1) on the workers, and chunkDone with the size of each chunk
// of them done.
func (r *renderer) runEach(n int, chunkDone func(int), fn func(i int)) {
	workers := r.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	const chunk = progressChunk
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n || r.stopped() {
					return
				}
				end := min(start+chunk, n)
				for i := start; i < end; i++ {
					fn(i)
				}
				chunkDone(end - start)
			}
		})
	}
	wg.Wait()
}

// prepare composes an assignment's config and computes its input digest.
func (r *renderer) prepare(a *Assignment) {
	tt := r.types[a.ClusterType]
	if tt.problem != "" {
		a.Err = errors.New(tt.problem)
		return
	}
	if err := r.sharedUsers[a.Assignment]; err != nil {
		a.Err = err
		return
	}
	for _, b := range r.broken {
		if !b.LabelsKnown || compose.Applies(b.Labels, a.Type, a.Target) {
			a.Err = &BrokenInputError{Broken: b}
			return
		}
	}
	a.Config = r.composer.Compose(a.Type, a.Target)
	r.engine.memo.share(a.Config.Data)
	a.InputDigest = r.digest(a, tt)
	if r.warn { // known whether the assignment is rendered or not: it is reported every time
		a.Waiting = waiting(r.composer.Validate(a.Config, a.Type, a.Target))
	}
}

// render validates a prepared assignment's config and renders its files. With
// configSchemaPolicy warn, an assignment whose config violates a schema is rendered without
// its platform config, which keeps its last valid version.
func (r *renderer) render(a *Assignment) {
	if !r.warn {
		if ds := r.composer.Validate(a.Config, a.Type, a.Target); len(ds) > 0 {
			a.Err = &ValidationError{Diagnostics: ds}
			return
		}
	}
	a.Files, a.Err = r.engine.RenderAssignment(r.env, a.Assignment, a.Config, r.types[a.ClusterType].ts)
	if a.Err == nil && a.Waiting != nil {
		a.Files.Config, a.Files.KeepConfig = nil, true
	}
}

// WaitingPrefix starts the message of each schema violation of an assignment waiting for
// platform configuration.
const WaitingPrefix = "waiting for platform configuration (configSchemaPolicy: warn; its namespace and reconciler are written, " +
	"its last valid platform config is kept): "

// waiting turns schema violations into the warnings of an assignment waiting for platform
// configuration.
func waiting(ds []controlplane.Diagnostic) []controlplane.Diagnostic {
	if len(ds) == 0 {
		return nil
	}
	out := make([]controlplane.Diagnostic, len(ds))
	for i, d := range ds {
		d.Severity = controlplane.SeverityWarning
		d.Message = WaitingPrefix + d.Message
		out[i] = d
	}
	return out
}

// BrokenInputError is an assignment held back because a document that may configure it
// failed to load: rendering without it could ship the wrong configuration.
type BrokenInputError struct{ Broken controlplane.Broken }

func (e *BrokenInputError) Error() string {
	return fmt.Sprintf("held back: %s is invalid and may configure it", e.Broken.Describe())
}

// ValidationError is a composed config that violates a schema.
type ValidationError struct{ Diagnostics []controlplane.Diagnostic }

func (e *ValidationError) Error() string {
	if len(e.Diagnostics) == 1 {
		return e.Diagnostics[0].Message
	}
	return fmt.Sprintf("%s (and %d more violations)", e.Diagnostics[0].Message, len(e.Diagnostics)-1)
}

// digest hashes everything an assignment's files depend on: the templates, the target
// (name, labels, manifests, workload, workspace), the cluster type name, the namespace,
// the environment and the composed config; and the schemas that validate it, so that a
// schema change validates again.
func (r *renderer) digest(a *Assignment, tt *typeTemplates) string {
	h := sha256Pool.Get().(hash.Hash)
	defer sha256Pool.Put(h)
	h.Reset()
	h.Write([]byte(Version))
	h.Write(tt.digest)
	h.Write(r.targetDigest(a.Target))
	writeStrings(h, r.env, a.ClusterType, a.Namespace)
	if a.Pinned != nil { // the effective manifests differ from the target's
		for _, k := range slices.Sorted(maps.Keys(a.Manifests)) {
			writeStrings(h, k, a.Manifests[k])
		}
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], a.Config.Digest)
	h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], r.composer.SchemaDigest(a.Type, a.Target))
	h.Write(b[:])
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// sha256Pool keeps the digests' hashers: one per assignment was a million allocations.
var sha256Pool = sync.Pool{New: func() any { return sha256.New() }}

// targetDigest is dt's digest: the one targetDigests made, or, for a target the snapshot
// does not list, a new one.
func (r *renderer) targetDigest(dt *controlplane.DeploymentTarget) []byte {
	if d, ok := r.targets[dt]; ok {
		return d
	}
	return digestTarget(dt)
}

// targetDigests digests every deployment target once, before any assignment is keyed or
// rendered: the map is only read afterwards, by every worker at once, without a lock that
// every worker would take twice per assignment.
func targetDigests(dts []*controlplane.DeploymentTarget) map[*controlplane.DeploymentTarget][]byte {
	m := make(map[*controlplane.DeploymentTarget][]byte, len(dts))
	for _, dt := range dts {
		m[dt] = digestTarget(dt)
	}
	return m
}

// digestTarget digests what a deployment target adds to its assignments' inputs: its
// name, workload, workspace, labels and manifests.
func digestTarget(dt *controlplane.DeploymentTarget) []byte {
	h := sha256.New()
	writeStrings(h, dt.Name, dt.Workload, dt.Workspace)
	for _, m := range []map[string]string{dt.Labels, dt.Manifests} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		writeStrings(h, fmt.Sprint(len(keys)))
		for _, k := range keys {
			writeStrings(h, k, m[k])
		}
	}
	return h.Sum(nil)
}

func writeStrings(h hash.Hash, ss ...string) {
	var b [8]byte
	for _, s := range ss {
		binary.LittleEndian.PutUint64(b[:], uint64(len(s)))
		h.Write(b[:])
		h.Write([]byte(s))
	}
}

// diagnostics reports failed assignments: every schema violation, and template failures
// bounded per template.
func (r *renderer) diagnostics(as []Assignment) []controlplane.Diagnostic {
	var out []controlplane.Diagnostic
	perTemplate := map[*Template]int{}
	held := map[string]int{}
	var heldBy []controlplane.Broken
	for i := range as {
		a := &as[i]
		var ve *ValidationError
		var te *TemplateError
		var be *BrokenInputError
		var se *SharedUserError
		out = append(out, a.Waiting...)
		switch {
		case a.Err == nil:
		case errors.As(a.Err, &se) && a.Target != nil:
			out = append(out, targetDiag(a, se.Error(), "rename one of the deployment targets (the OS user is <environment>-<target>, "+
				"shortened when longer than 32 characters)"))
		case errors.As(a.Err, &be):
			key := where(be.Broken.Source)
			if held[key] == 0 {
				heldBy = append(heldBy, be.Broken)
			}
			held[key]++
		case errors.As(a.Err, &ve):
			out = append(out, ve.Diagnostics...)
		case errors.As(a.Err, &te):
			perTemplate[te.Template]++
			if n := perTemplate[te.Template]; n <= maxErrorsPerTemplate {
				out = append(out, templateFailure(a, te))
			}
		}
	}
	for _, b := range heldBy {
		d := b.Source.Diag("", fmt.Sprintf("%d assignment(s) it may configure are held back (their previous files are kept) until it is fixed",
			held[where(b.Source)]), "fix the document above")
		d.Kind, d.Name = b.Kind, b.Name
		out = append(out, d)
	}
	for t, n := range perTemplate {
		if n > maxErrorsPerTemplate {
			d := t.Source.Diag("spec.manifests", fmt.Sprintf("and %d more assignments failed with this template", n-maxErrorsPerTemplate), "")
			d.Kind, d.Name = "Template", t.Name
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Message < b.Message
	})
	return out
}

// templateFailure locates a template that failed for an assignment. A control-plane
// template is blamed at the failing line of its file. A built-in template has no file the
// user can fix: when it refuses its input (with fail) the blame goes to the deployment
// target whose manifests or config it refused (built-in messages name the template).
func templateFailure(a *Assignment, te *TemplateError) controlplane.Diagnostic {
	msg, refused := failMessage(te.Err)
	if te.Template.Source.File == "" && refused && a.Target != nil {
		return targetDiag(a, msg,
			"fix the target's manifests, or the config value where it is set (fleetform explain shows where); the template's header comment lists the keys it reads")
	}
	d := templateDiag(te.Template.Source, te.Err)
	d.Kind, d.Name = "Template", te.Template.Name
	if refused {
		d.Message = msg
	}
	d.Message = fmt.Sprintf("rendering %s on %s: %s", a.DeploymentTarget, a.ClusterType, d.Message)
	return d
}

// targetDiag blames an assignment's deployment target for why it is not rendered.
func targetDiag(a *Assignment, msg, hint string) controlplane.Diagnostic {
	path := "metadata.name"
	if a.Target.Path != "" {
		path = a.Target.Path
	}
	return a.Target.Source.Diag(path, fmt.Sprintf("rendering %s on %s: %s", a.DeploymentTarget, a.ClusterType, msg), hint)
}

// failMessage returns the message a template passed to fail, without text/template's
// location prefix, and whether the error came from fail.
func failMessage(err error) (string, bool) {
	const marker = "error calling fail: "
	msg := err.Error()
	if i := strings.LastIndex(msg, marker); i >= 0 {
		return msg[i+len(marker):], true
	}
	return msg, false
}

func where(s controlplane.Source) string { return fmt.Sprintf("%s:%d", s.File, s.Line) }

// Tree returns every file of the output as path -> content, relative to the GitOps path.
// Failed assignments have no files.
func (o *Output) Tree() map[string][]byte {
	tree := map[string][]byte{}
	for _, ct := range o.ClusterTypes {
		tree[ct+"/"+ReadmeFile] = []byte(ReadmeText)
	}
	for i := range o.Assignments {
		a := &o.Assignments[i]
		if a.Files == nil {
			continue
		}
		dir := a.Dir()
		a.Files.Each(func(name string, content []byte) { tree[path.Join(dir, name)] = content })
	}
	if o.PromotedCommit != "" {
		tree[PromotedCommitFile] = []byte(o.PromotedCommit)
	}
	return tree
}

// Failed returns the assignments that could not be rendered.
func (o *Output) Failed() []*Assignment {
	var out []*Assignment
	for i := range o.Assignments {
		if o.Assignments[i].Err != nil {
			out = append(out, &o.Assignments[i])
		}
	}
	return out
}
