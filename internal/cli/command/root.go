package command

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Root completes a command line's root: errors and usage are printed by Main, not cobra; it
// takes --log-level and --log-format (the logger every command gets in e), the hidden
// --cpuprofile and --memprofile, and sets the process's memory budget (SetMemoryBudget).
func Root(e *Env, root *cobra.Command) *cobra.Command {
	var logLevel, logFormat, cpuProfile, memProfile string
	root.SilenceUsage, root.SilenceErrors = true, true
	root.SetFlagErrorFunc(suggestFlag)
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		logger, err := newLogger(e.Stderr, logLevel, logFormat)
		if err != nil {
			return Usage(err)
		}
		e.Logger = logger
		SetMemoryBudget()
		return e.startProfile(cpuProfile, memProfile)
	}
	f := root.PersistentFlags()
	f.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (for go tool pprof)")
	f.StringVar(&memProfile, "memprofile", "", "write a heap profile of the memory in use when the command ends to this file")
	_ = f.MarkHidden("cpuprofile")
	_ = f.MarkHidden("memprofile")
	return root
}

// suggestFlag adds "did you mean" to an unknown flag's error: the command's flag nearest to
// the one given, when one is near.
func suggestFlag(cmd *cobra.Command, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok {
		return err
	}
	var known []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	if best := controlplane.Closest(name, known, len(name)/3+1); best != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, best)
	}
	return err
}

// MemoryBudget is the soft memory limit of every fleetform process unless GOMEMLIMIT sets
// one, and GCPercent its collector's GOGC unless GOGC sets it.
//
// Most of what a fleet-wide command allocates lives until it ends (the schedule, the state
// read, what it renders), so collecting at every doubling of the heap (GOGC=100) mostly
// marks the same objects again: the heap may grow to three times what is live (GOGC=200),
// and the runtime collects more often as it nears the limit instead. Without a limit a
// million-assignment apply would reach about twice its live heap of 1 GB. docs/operations.md
// says how to change both, as a container's memory limit requires.
const (
	MemoryBudget = 1536 << 20
	GCPercent    = 200
)

// SetMemoryBudget applies MemoryBudget and GCPercent where GOMEMLIMIT and GOGC do not say
// otherwise.
func SetMemoryBudget() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(MemoryBudget)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(GCPercent)
	}
}

// newLogger returns the logger commands write to stderr with.
func newLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// startProfile starts the CPU profile --cpuprofile asks for and arranges the heap profile
// --memprofile asks for (written when the command ends); Main stops them.
func (e *Env) startProfile(cpuFile, memFile string) error {
	var stops []func()
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return Usagef("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return Usagef("--cpuprofile: %w", err)
		}
		stops = append(stops, func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		})
	}
	if memFile != "" {
		f, err := os.Create(memFile)
		if err != nil {
			return Usagef("--memprofile: %w", err)
		}
		stops = append(stops, func() {
			runtime.GC() // the heap in use at the end, not at the last collection
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				e.Logger.Warn("--memprofile", "error", err.Error())
			}
			_ = f.Close()
		})
	}
	if len(stops) > 0 {
		e.stopProfile = func() {
			for _, stop := range stops {
				stop()
			}
		}
	}
	return nil
}
