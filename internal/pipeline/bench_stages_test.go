package pipeline_test

// The benchmarks of the quality bars (SPEC section 8): every pipeline
// stage, and the whole pipeline, on the synthetic fleet of internal/dev/fleetgen (by default
// 1,000 deployment targets x 100 cluster types = 100,000 assignments).
//
// Run them with `make bench`, or for one benchmark with a profile:
//
//	go test -run '^$' -bench '^BenchmarkPipeline$' -benchmem -benchtime 3x \
//	    -cpuprofile cpu.prof -memprofile mem.prof ./internal/pipeline
//
// FLEETFORM_BENCH_TARGETS and FLEETFORM_BENCH_CLUSTER_TYPES change the fleet's size.
// BenchmarkRenderCLI (`fleetform render` end to end, writing 300,100 files) is skipped
// unless FLEETFORM_BENCH_E2E=1; run it with -benchtime 1x.
//
// Besides ns/op, B/op and allocs/op, the benchmarks report:
//   - cpu-s/op: user + system CPU time of the whole process per op (GC included). Other
//     load on the machine moves it much less than ns/op; on 2 cores ns/op is at least half
//     of it.
//   - ns/assignment: ns/op divided by the number of assignments.
//   - peak-heap-MiB: the largest heap (objects, live or not yet swept), sampled every 5 ms.
//   - peak-RSS-MiB and base-RSS-MiB (Linux): the process's peak RSS during the timed loop
//     (VmHWM, reset before the loop) and its RSS before it.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/compose"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/dev/fleetgen"
	"github.com/fleetform/fleetform/internal/render"
	"github.com/fleetform/fleetform/internal/schedule"
)

// fleetSpec is the benchmarked fleet: the defaults (1,000 x 100), or the sizes in
// FLEETFORM_BENCH_TARGETS and FLEETFORM_BENCH_CLUSTER_TYPES.
func fleetSpec(b *testing.B) fleetgen.Spec {
	b.Helper()
	spec := fleetgen.Spec{Targets: envInt(b, "FLEETFORM_BENCH_TARGETS"), ClusterTypes: envInt(b, "FLEETFORM_BENCH_CLUSTER_TYPES")}.WithDefaults()
	if err := spec.Validate(); err != nil {
		b.Fatal(err)
	}
	return spec
}

func envInt(b *testing.B, name string) int {
	b.Helper()
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

// writeFleet writes the fleet into a fresh temporary directory.
func writeFleet(b *testing.B) (dir string, spec fleetgen.Spec) {
	b.Helper()
	spec = fleetSpec(b)
	dir = b.TempDir()
	if err := fleetgen.Write(dir, spec); err != nil {
		b.Fatal(err)
	}
	return dir, spec
}

func load(ctx context.Context, b *testing.B, dir, env string) *controlplane.Snapshot {
	b.Helper()
	cp, err := controlplane.Open(ctx, dir, controlplane.Options{})
	if err != nil {
		b.Fatal(err)
	}
	snap, err := cp.Load(ctx, env)
	if err != nil {
		b.Fatal(err)
	}
	for _, d := range snap.Diagnostics {
		if d.Severity == controlplane.SeverityError {
			b.Fatalf("load: %v", d)
		}
	}
	return snap
}

func checkSchedule(b *testing.B, sched *schedule.Result, spec fleetgen.Spec) {
	b.Helper()
	if want := spec.Targets * spec.ClusterTypes; len(sched.Assignments) != want {
		b.Fatalf("%d assignments, want %d", len(sched.Assignments), want)
	}
}

func checkRender(b *testing.B, out *render.Output, spec fleetgen.Spec) {
	b.Helper()
	if failed := out.Failed(); len(failed) > 0 {
		b.Fatalf("%d assignments failed, first: %v", len(failed), failed[0].Err)
	}
	if want := spec.Targets * spec.ClusterTypes; len(out.Assignments) != want {
		b.Fatalf("%d assignments rendered, want %d", len(out.Assignments), want)
	}
}

// BenchmarkGenerate measures the generator itself (not a pipeline stage).
func BenchmarkGenerate(b *testing.B) {
	spec := fleetSpec(b)
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(fleetgen.Generate(spec))
	}
	b.ReportMetric(float64(n), "files")
}

// BenchmarkLoad opens the control plane folder and loads the environment: listing, reading
// and strictly decoding every file, unfolding workloads into deployment targets.
func BenchmarkLoad(b *testing.B) {
	dir, spec := writeFleet(b)
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		load(b.Context(), b, dir, spec.Environment)
	}
	m.report(b, 0)
}

// BenchmarkSchedule evaluates every scheduling policy and builds the assignments.
func BenchmarkSchedule(b *testing.B) {
	dir, spec := writeFleet(b)
	snap := load(b.Context(), b, dir, spec.Environment)
	var sched *schedule.Result
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		sched = schedule.Schedule(snap)
	}
	m.report(b, len(sched.Assignments))
	checkSchedule(b, sched, spec)
}

// BenchmarkCompose composes the platform config of every assignment with a fresh Composer
// (so its cache starts empty, as in one render).
func BenchmarkCompose(b *testing.B) {
	dir, spec := writeFleet(b)
	snap := load(b.Context(), b, dir, spec.Environment)
	sched := schedule.Schedule(snap)
	checkSchedule(b, sched, spec)
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		c := compose.New(snap)
		for i := range sched.Assignments {
			a := &sched.Assignments[i]
			if cfg := c.Compose(a.Type, a.Target); cfg == nil {
				b.Fatal("nil config")
			}
		}
	}
	m.report(b, len(sched.Assignments))
}

// BenchmarkRender is render.Render of the whole fleet: compose, validate, digest and render
// the three files of every assignment, on GOMAXPROCS workers.
func BenchmarkRender(b *testing.B) {
	dir, spec := writeFleet(b)
	snap := load(b.Context(), b, dir, spec.Environment)
	sched := schedule.Schedule(snap)
	checkSchedule(b, sched, spec)
	var out *render.Output
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		out = render.Render(snap, sched, render.Options{})
	}
	m.report(b, len(sched.Assignments))
	checkRender(b, out, spec)
}

// BenchmarkTree builds the path -> content map of a rendered fleet, as `render` does before
// writing it.
func BenchmarkTree(b *testing.B) {
	dir, spec := writeFleet(b)
	snap := load(b.Context(), b, dir, spec.Environment)
	out := render.Render(snap, schedule.Schedule(snap), render.Options{})
	checkRender(b, out, spec)
	var files int
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		files = len(out.Tree())
	}
	m.report(b, len(out.Assignments))
	b.ReportMetric(float64(files), "files")
}

// BenchmarkPipeline is the whole pipeline in memory, from the control-plane folder to the
// rendered output: open + load + schedule + render. Quality bar: < 3 s and < 1 GiB.
func BenchmarkPipeline(b *testing.B) {
	dir, spec := writeFleet(b)
	var out *render.Output
	m := startMemProbe()
	b.ReportAllocs()
	for b.Loop() {
		snap := load(b.Context(), b, dir, spec.Environment)
		out = render.Render(snap, schedule.Schedule(snap), render.Options{})
	}
	m.report(b, len(out.Assignments))
	checkRender(b, out, spec)
}

// memProbe samples the heap while a benchmark runs and measures the process's peak RSS.
type memProbe struct {
	baseRSS  uint64
	hwmReset bool
	stop     chan struct{}
	done     sync.WaitGroup
	peakHeap uint64
	cpu      time.Duration
}

// heapMetric is the memory occupied by heap objects, live or not yet swept.
const heapMetric = "/memory/classes/heap/objects:bytes"

// startMemProbe returns memory to the OS, resets the peak RSS and starts sampling the heap.
// Call it right before the timed loop.
func startMemProbe() *memProbe {
	runtime.GC()
	debug.FreeOSMemory()
	m := &memProbe{stop: make(chan struct{})}
	// Writing 5 to clear_refs resets VmHWM to the current RSS (Linux 4.0+).
	m.hwmReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
	m.baseRSS = procStatus("VmRSS")
	m.cpu = processCPU()
	m.done.Add(1)
	go func() {
		defer m.done.Done()
		sample := []metrics.Sample{{Name: heapMetric}}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			m.peakHeap = max(m.peakHeap, sample[0].Value.Uint64())
			select {
			case <-m.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// report stops the probe and reports the process CPU time per op, ns/assignment (when
// assignments > 0) and the memory metrics.
func (m *memProbe) report(b *testing.B, assignments int) {
	b.Helper()
	b.StopTimer()
	cpu := processCPU() - m.cpu
	close(m.stop)
	m.done.Wait()
	const mib = 1 << 20
	if cpu > 0 && b.N > 0 {
		// CPU time of the whole process (every goroutine, GC included): unlike ns/op, it
		// hardly moves when other processes compete for the cores.
		b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	}
	if assignments > 0 && b.N > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(assignments), "ns/assignment")
	}
	b.ReportMetric(float64(m.peakHeap)/mib, "peak-heap-MiB")
	if hwm := procStatus("VmHWM"); m.hwmReset && hwm > 0 {
		b.ReportMetric(float64(hwm)/mib, "peak-RSS-MiB")
		b.ReportMetric(float64(m.baseRSS)/mib, "base-RSS-MiB")
	}
}

// procStatus returns a size field of /proc/self/status in bytes, or 0.
func procStatus(field string) uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// BenchmarkRenderCLI is `fleetform render` end to end, in process: the pipeline, then the
// 300,100 files written into a fresh folder (fresh) or compared with an up-to-date one
// (unchanged). It writes about 1.6 GB per iteration and takes tens of seconds, so it runs
// only with FLEETFORM_BENCH_E2E=1 (use -benchtime 1x).
func BenchmarkRenderCLI(b *testing.B) {
	if os.Getenv("FLEETFORM_BENCH_E2E") == "" {
		b.Skip("set FLEETFORM_BENCH_E2E=1 to run")
	}
	dir, spec := writeFleet(b)
	render := func(b *testing.B, out string) {
		b.Helper()
		var stderr strings.Builder
		args := []string{"render", "--control-plane", dir, "--env", spec.Environment, "--out", out}
		if code := cli.Main(b.Context(), args, strings.NewReader(""), io.Discard, &stderr); code != cli.ExitOK {
			b.Fatalf("render: exit %d\n%s", code, stderr.String())
		}
	}
	b.Run("fresh", func(b *testing.B) {
		root := b.TempDir()
		m := startMemProbe()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			out := filepath.Join(root, strconv.Itoa(i))
			render(b, out)
			b.StopTimer()
			if err := os.RemoveAll(out); err != nil {
				b.Fatal(err)
			}
			i++
			b.StartTimer()
		}
		m.report(b, spec.Targets*spec.ClusterTypes)
	})
	b.Run("unchanged", func(b *testing.B) {
		out := b.TempDir()
		render(b, out)
		m := startMemProbe()
		b.ReportAllocs()
		for b.Loop() {
			render(b, out)
		}
		m.report(b, spec.Targets*spec.ClusterTypes)
	})
}
