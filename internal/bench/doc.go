// Package bench holds the benchmarks of the quality bars (SPEC section 8): every pipeline
// stage, and the whole pipeline, on the synthetic fleet of internal/fleetgen (by default
// 1,000 deployment targets x 100 cluster types = 100,000 assignments).
//
// Run them with `make bench`, or for one benchmark with a profile:
//
//	go test -run '^$' -bench '^BenchmarkPipeline$' -benchmem -benchtime 3x \
//	    -cpuprofile cpu.prof -memprofile mem.prof ./internal/bench
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
package bench
