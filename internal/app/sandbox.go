package app

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// RenderWorkerEnv set to 1 makes a fleetform process a render worker (ServeRenderWorker)
// instead of a command line.
const RenderWorkerEnv = "FLEETFORM_RENDER_WORKER"

// Sandbox renders charts and kustomize builds in a worker process bounded in time and
// memory: a chart's templates and a kustomization are the application team's code, and a
// template that loops for ever or builds a huge string must fail its own target, not
// exhaust the machine. One worker serves the renders one after the other; one that passes
// a bound is killed, and the next render starts a new one. What a render prints (kustomize
// prints its deprecation warnings) stays in the worker: warnings come back with the
// answer, located.
type Sandbox struct {
	// Exe is the fleetform executable run as the worker (with RenderWorkerEnv=1).
	Exe string
	// Timeout bounds one target's render; Memory the worker's resident memory, in bytes.
	Timeout time.Duration
	Memory  uint64

	mu     sync.Mutex
	worker *worker
}

// Default bounds of a chart's render.
const (
	DefaultRenderTimeout = 2 * time.Minute
	DefaultRenderMemory  = 2 << 30
)

// NewSandbox returns a sandbox running exe with the default bounds.
func NewSandbox(exe string) *Sandbox {
	return &Sandbox{Exe: exe, Timeout: DefaultRenderTimeout, Memory: DefaultRenderMemory}
}

// chartRequest is one render of a chart: its files (values.yaml substituted), the values
// above them, and how to render.
type chartRequest struct {
	Dir    string
	Files  []*loader.BufferedFile
	Values map[string]any
	Render helmRender
}

// workerRequest is one render a worker makes: a chart's or a kustomize build's.
type workerRequest struct {
	Chart     *chartRequest
	Kustomize *kustomizeRequest
}

// what names the render in errors.
func (req workerRequest) what() string {
	if req.Kustomize != nil {
		return "kustomize " + req.Kustomize.Dir
	}
	return "chart " + req.Chart.Dir
}

// render makes the render in this process.
func (req workerRequest) render() ([]doc, []string, error) {
	if req.Kustomize != nil {
		return req.Kustomize.build()
	}
	docs, err := req.Chart.render()
	return docs, nil, err
}

// workerAnswer is a worker's answer: the documents and the warnings, or why not (Schema
// when the chart's schema refuses the values: its problems by key).
type workerAnswer struct {
	Docs     []renderedDoc
	Warnings []string
	Error    string
	Schema   *chartSchemaError
}

// renderedDoc is a doc as a worker sends it.
type renderedDoc struct{ Template, Text string }

// render loads the chart, checks it and renders it, in this process.
func (req chartRequest) render() ([]doc, error) {
	c, err := loader.LoadFiles(req.Files)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", req.Dir, err)
	}
	if err := checkChart(req.Dir, c); err != nil {
		return nil, err
	}
	return renderChart(req.Dir, c, req.Values, req.Render)
}

var registerGob sync.Once

// registerValues registers the types values hold for gob.
func registerValues() {
	registerGob.Do(func() {
		gob.Register(map[string]any{})
		gob.Register([]any{})
	})
}

// restoreEmptyLists gives back the empty lists of values gob decoded: gob decodes an empty
// list as a nil one, which a template sees as null ([] became null). Values hold no nil list
// to begin with (Helm's values reader and --set parser make empty ones), so every nil list
// was an empty one. Mappings need nothing: gob decodes an empty one as an empty one.
func restoreEmptyLists(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = restoreEmptyLists(x)
		}
	case []any:
		if v == nil {
			return []any{}
		}
		for i, x := range v {
			v[i] = restoreEmptyLists(x)
		}
	}
	return v
}

// worker is a running render worker.
type worker struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *gob.Encoder
	dec    *gob.Decoder
	errOut *cappedBuffer
	over   chan struct{} // closed when it passed the memory bound (and was killed)
	stop   chan struct{} // closed when it ends: stops the memory watch
}

// start starts a worker.
func (s *Sandbox) start() (*worker, error) {
	cmd := exec.Command(s.Exe) //nolint:gosec,noctx // fleetform's own executable; it lives across renders, each bounded by its own timer
	// Nothing of this process's environment (tokens, credentials) goes to the worker; the
	// Go runtime collects harder as it nears the bound.
	cmd.Env = []string{RenderWorkerEnv + "=1", fmt.Sprintf("GOMEMLIMIT=%d", s.Memory/4*3)}
	w := &worker{cmd: cmd, errOut: &cappedBuffer{max: 64 << 10}, over: make(chan struct{}), stop: make(chan struct{})}
	cmd.Stderr = w.errOut
	var err error
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the render worker: %w", err)
	}
	w.enc, w.dec = gob.NewEncoder(w.stdin), gob.NewDecoder(stdout)
	go watchMemory(cmd.Process, s.Memory, w.over, w.stop)
	return w, nil
}

// end kills the worker and waits for it.
func (w *worker) end() {
	_ = w.cmd.Process.Kill()
	_ = w.stdin.Close()
	_ = w.cmd.Wait()
	close(w.stop)
}

// Close ends the worker, if one runs.
func (s *Sandbox) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.worker != nil {
		s.worker.end()
		s.worker = nil
	}
}

// render runs req in the worker; a render that takes longer than the timeout, or makes the
// worker hold more memory than the bound, is stopped (the worker killed) and fails.
func (s *Sandbox) render(ctx context.Context, req workerRequest) ([]doc, []string, error) {
	registerValues()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.worker == nil {
		w, err := s.start()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", req.what(), err)
		}
		s.worker = w
	}
	w := s.worker
	type result struct {
		ans workerAnswer
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		if r.err = w.enc.Encode(req); r.err == nil {
			r.err = w.dec.Decode(&r.ans)
		}
		done <- r
	}()
	timer := time.NewTimer(s.Timeout)
	defer timer.Stop()
	var failure error
	select {
	case r := <-done:
		if r.err == nil {
			return answerDocs(r.ans)
		}
		failure = fmt.Errorf("%s: the render worker failed (%w): %s", req.what(), r.err, bytes.TrimSpace(tail(w.errOut.Bytes(), 512)))
	case <-timer.C:
		failure = fmt.Errorf("%s: rendering took longer than %s: a template loops too long (fleetform stopped it)", req.what(), s.Timeout)
	case <-w.over:
		failure = s.overMemory(req)
	case <-ctx.Done():
		failure = ctx.Err()
	}
	w.end()
	<-done
	s.worker = nil
	select {
	case <-w.over: // it passed the memory bound while it failed otherwise
		return nil, nil, s.overMemory(req)
	default:
	}
	return nil, nil, failure
}

// overMemory is the error of a render stopped at the memory bound.
func (s *Sandbox) overMemory(req workerRequest) error {
	return fmt.Errorf("%s: rendering used more than %d MiB: a template builds too much (fleetform stopped it)", req.what(), s.Memory>>20)
}

// answerDocs are an answer's documents and warnings, or its error.
func answerDocs(ans workerAnswer) ([]doc, []string, error) {
	if ans.Schema != nil {
		return nil, nil, ans.Schema
	}
	if ans.Error != "" {
		return nil, nil, errors.New(ans.Error)
	}
	docs := make([]doc, len(ans.Docs))
	for i, d := range ans.Docs {
		docs[i] = doc{template: d.Template, text: d.Text}
	}
	return docs, ans.Warnings, nil
}

// cappedBuffer is a buffer that keeps the last max bytes at most (a worker's error output:
// what it printed last says why it failed).
type cappedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (b *cappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf)
}

// memoryCheck is how often a worker's memory is looked at.
const memoryCheck = 5 * time.Millisecond

// watchMemory kills the worker p when its resident memory passes limit (closing over),
// until stop is closed. It reads /proc; where there is none, only the time bound holds.
func watchMemory(p *os.Process, limit uint64, over, stop chan struct{}) {
	statm := fmt.Sprintf("/proc/%d/statm", p.Pid)
	page := uint64(os.Getpagesize()) //nolint:gosec // a page size is small and positive
	tick := time.NewTicker(memoryCheck)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		data, err := os.ReadFile(statm) //nolint:gosec // a path of /proc
		if err != nil {
			return
		}
		var size, resident uint64
		if _, err := fmt.Sscan(string(data), &size, &resident); err != nil {
			return
		}
		if resident*page > limit {
			close(over)
			_ = p.Kill()
			return
		}
	}
}

// tail is the last n bytes of b.
func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// ServeRenderWorker makes the renders it reads from r (charts, kustomize builds), one
// after the other, and writes each answer to w, until r ends; it returns the process's
// exit code.
func ServeRenderWorker(r io.Reader, w io.Writer) int {
	registerValues()
	dec, enc := gob.NewDecoder(r), gob.NewEncoder(w)
	for {
		var req workerRequest
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintln(os.Stderr, "render worker: read a request:", err)
			return 2
		}
		if req.Chart != nil {
			restoreEmptyLists(req.Chart.Values)
		}
		var ans workerAnswer
		docs, warnings, err := req.render()
		ans.Warnings = warnings
		if err != nil {
			ans.Error = err.Error()
			errors.As(err, &ans.Schema)
		}
		for _, d := range docs {
			ans.Docs = append(ans.Docs, renderedDoc{Template: d.template, Text: d.text})
		}
		if err := enc.Encode(ans); err != nil {
			fmt.Fprintln(os.Stderr, "render worker: write an answer:", err)
			return 2
		}
		debug.FreeOSMemory() // what one chart built is not held against the next
	}
}
