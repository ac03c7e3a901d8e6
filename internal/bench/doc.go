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
// Besides ns/op, B/op and allocs/op, the benchmarks report ns/assignment, the peak heap
// (sampled every 5 ms) and, on Linux, the process's peak RSS during the timed loop
// (peak-RSS-MiB, VmHWM reset before the loop) and its RSS before it (base-RSS-MiB).
package bench
