// Package cli is the fleetform command line: one file per command, options bound into
// per-command structs, and a single Main that returns the exit code.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK = 0
	// ExitFailed: the input has problems, or the command could not do its job.
	ExitFailed = 1
	// ExitUsage: the command line is wrong.
	ExitUsage = 2
	// ExitRefused: a gate refused the operation (promotion).
	ExitRefused = 3
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// failed returns an error that makes Main exit with code after printing err (when not nil).
func failed(code int, err error) error { return &exitError{code: code, err: err} }

// env is what commands run with: streams and a logger.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	logger         *slog.Logger
	// stopProfile ends the CPU profile of --cpuprofile (nil: none).
	stopProfile func()
}

// Interrupted is the cause of a command's context ending on a signal (SIGINT, SIGTERM).
type Interrupted struct{ Signal os.Signal }

func (i Interrupted) Error() string { return "interrupted by " + i.Signal.String() }

// ExitCode is the shell's code for a process ended by the signal: 128 + its number (130 for
// SIGINT, 143 for SIGTERM).
func (i Interrupted) ExitCode() int {
	if s, ok := i.Signal.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 128 + int(syscall.SIGINT)
}

// Run runs the command line until it ends or a SIGINT or SIGTERM stops it: the first signal
// cancels the command's context (it stops promptly, writes nothing half-way and exits with
// 128 + the signal's number; a server stops cleanly and exits 0), a second one ends the
// process at once.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs) // the next one takes the default action: the process ends
			cancel(Interrupted{Signal: s})
		case <-ctx.Done():
		}
	}()
	return Main(ctx, args, stdin, stdout, stderr)
}

// Main runs the fleetform command line and returns the process exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &countingWriter{w: stdout}
	e := &env{stdin: stdin, stdout: out, stderr: stderr,
		logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	root := newRoot(e) //nolint:contextcheck // commands read ctx from cobra (ExecuteContext below)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(out)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if e.stopProfile != nil {
		e.stopProfile()
	}
	var stopped Interrupted
	if err != nil && errors.As(context.Cause(ctx), &stopped) {
		// Stopped part way (a server that stops on the signal returns nil: its normal end).
		printFailure(cmd, out, stopped)
		fmt.Fprintln(stderr, "error:", stopped)
		return stopped.ExitCode()
	}
	if err == nil {
		return ExitOK
	}
	printFailure(cmd, out, err)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(stderr, "error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "error:", err)
	return ExitUsage
}

// startProfile starts the CPU profile --cpuprofile asks for and arranges the heap profile
// --memprofile asks for (written when the command ends); Main stops them.
func (e *env) startProfile(cpuFile, memFile string) error {
	var stops []func()
	if cpuFile != "" {
		f, err := os.Create(cpuFile)
		if err != nil {
			return failed(ExitUsage, fmt.Errorf("--cpuprofile: %w", err))
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			_ = f.Close()
			return failed(ExitUsage, fmt.Errorf("--cpuprofile: %w", err))
		}
		stops = append(stops, func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		})
	}
	if memFile != "" {
		f, err := os.Create(memFile)
		if err != nil {
			return failed(ExitUsage, fmt.Errorf("--memprofile: %w", err))
		}
		stops = append(stops, func() {
			runtime.GC() // the heap in use at the end, not at the last collection
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				e.logger.Warn("--memprofile", "error", err.Error())
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

// fleetCommands plan and write a whole environment, streaming what they render into the
// GitOps repository's pack: their memory is budgeted (budgetMemory), and they collect at
// the GOGC given here. render and validate hold every rendered file, so a budget below that
// would only make them collect in vain.
var fleetCommands = map[string]int{"apply": applyGCPercent, "plan": planGCPercent}

// memoryBudget is the soft memory limit of apply and plan.
const memoryBudget = 1536 << 20

// applyGCPercent is the collector's GOGC for apply: the heap grows to three times what is
// live before a collection, not twice, under the memory budget.
const applyGCPercent = 200

// planGCPercent is the collector's GOGC for plan: off, so that it collects only as its heap
// nears the memory budget. A plan writes nothing: what it allocates is mostly what it reads
// and keeps to the end (the schedule, the render's output). A million-assignment plan of
// one workload's change took 0.84 s instead of 0.90 s, with a peak RSS of 790 MiB instead
// of 590 MiB. An apply keeps collecting before the budget: a cold apply of 100,000
// assignments would otherwise hold all it ever allocated, up to the budget.
const planGCPercent = -1

// budgetMemory sets a soft memory limit of memoryBudget, unless GOMEMLIMIT sets one: the
// Go runtime otherwise lets the heap grow to twice what is live before it collects, which
// for a million-assignment apply (about 1 GB live, the render streamed into the pack) was
// 3.4 GB of peak RSS. Under the limit the collector runs more often as the heap nears it
// (about 7% more CPU for a 300,000-assignment cold apply, whose peak RSS went from 1.1 GB
// to 0.7 GB with a limit of 600 MiB); a smaller fleet never reaches it.
//
// Below the limit it collects less often (gcPercent, unless GOGC sets it): most of what
// apply and plan allocate lives until they end (the schedule, the render's output, the
// state read), so collecting it at every doubling only marks it again. A million-assignment
// apply with nothing changed took 0.75 s instead of 0.89 s at GOGC=200; the cold apply,
// held by the limit, the same time and peak RSS.
func budgetMemory(gcPercent int) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryBudget)
	}
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}

func newRoot(e *env) *cobra.Command {
	var logLevel, logFormat, cpuProfile, memProfile string
	root := &cobra.Command{
		Use: "fleetform",
		Example: "  fleetform validate --control-plane ./platform\n" +
			"  fleetform schedule --control-plane ./platform --env dev\n" +
			"  fleetform explain --control-plane ./platform --env dev --deployment-target shop-web\n" +
			"  fleetform apply --control-plane ./platform --env dev --gitops ../platform-gitops",
		Short: "Fleet workload and configuration management, the GitOps way",
		Long: "fleetform turns a control plane kept in git (environments, cluster types, workloads,\n" +
			"scheduling policies, config values, templates) into the GitOps tree every cluster type\n" +
			"must reconcile.",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			logger, err := newLogger(e.stderr, logLevel, logFormat)
			if err != nil {
				return failed(ExitUsage, err)
			}
			e.logger = logger
			if gcPercent, ok := fleetCommands[cmd.Name()]; ok {
				budgetMemory(gcPercent)
			}
			return e.startProfile(cpuProfile, memProfile)
		},
	}
	root.PersistentFlags().StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	root.PersistentFlags().StringVar(&logFormat, "log-format", "text", "log format: text or json")
	root.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the command to this file (for go tool pprof)")
	root.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a heap profile of the memory in use when the command ends to this file")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	root.AddCommand(
		newValidateCmd(e),
		newScheduleCmd(e),
		newRenderCmd(e),
		newExplainCmd(e),
		newPlanCmd(e),
		newApplyCmd(e),
		newPromoteCmd(e),
		newVersionCmd(e),
		newDevCmd(e),
		newHubCmd(e),
		newStatusCmd(e),
		newDiffCmd(e),
		newHistoryCmd(e),
		newDriftCmd(e),
		newApproveCmd(e),
		newSimCmd(e),
		newAgentCmd(e),
		newServeCmd(e),
		newSyncCmd(e),
		newSourcesCmd(e),
		newInitCmd(e),
		newAddCmd(e),
		newSetCmd(e),
		newUnsetCmd(e),
		newRemoveCmd(e),
		newOnboardCmd(e),
		newAppCmd(e),
	)
	return root
}
