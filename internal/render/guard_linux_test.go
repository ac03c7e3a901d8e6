package render_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// limitProcess caps this process's data segment at what it uses now plus extraData bytes,
// and (unless cpuSeconds is 0) its CPU time at what it used so far plus cpuSeconds: past
// either, the kernel stops it (an allocation fails with "fatal error: out of memory", or
// SIGXCPU kills it), so a runaway template fails the test instead of exhausting the shared
// machine.
func limitProcess(extraData uint64, cpuSeconds uint64) error {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err
	}
	var data uint64
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmData:" {
			kib, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return err
			}
			data = kib << 10
		}
	}
	if data == 0 {
		return fmt.Errorf("no VmData in /proc/self/status")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: data + extraData, Max: data + extraData}); err != nil {
		return fmt.Errorf("RLIMIT_DATA: %w", err)
	}
	if cpuSeconds == 0 {
		return nil
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return err
	}
	used := uint64(ru.Utime.Sec + ru.Stime.Sec)
	return syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: used + cpuSeconds, Max: used + cpuSeconds + 5})
}

const canLimitProcess = true

// cpuTime is the CPU time this process has used: what a bound on a render's time is checked
// against in tests, since it does not grow when other processes load the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
