// Package command is what fleetform's command lines share (the product's fleetform and the
// developers' fleetform-dev): the root command's log and profile flags, the streams and
// logger a command runs with, the -o and --hub flags, and the one place where an error
// becomes an exit code.
package command

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
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
	// ExitRefused: a gate or a safety rule refused the operation; nothing was written.
	ExitRefused = 3
)

// Env is what a command runs with: its streams and logger.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Logger         *slog.Logger
	// stopProfile ends the profiles of --cpuprofile and --memprofile (nil: none).
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

// Run runs a command line until it ends or a SIGINT or SIGTERM stops it: the first signal
// cancels the command's context (it stops promptly, writes nothing half-way and exits with
// 128 + the signal's number; a server stops cleanly and exits 0), a second one ends the
// process at once.
func Run(newRoot func(*Env) *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
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
	return Main(ctx, newRoot, args, stdin, stdout, stderr)
}

// Main runs the command line newRoot builds and returns the process exit code (ExitCode).
func Main(ctx context.Context, newRoot func(*Env) *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &countingWriter{w: stdout}
	e := &Env{Stdin: stdin, Stdout: out, Stderr: stderr,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	root := newRoot(e) //nolint:contextcheck // commands read ctx from cobra (ExecuteContext below)
	ran := markRuns(root)
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
	if !*ran {
		err = Usage(err) // cobra's own: an unknown command or flag, wrong arguments
	}
	printFailure(cmd, out, err)
	if msg := message(err); msg != "" {
		fmt.Fprintln(stderr, "error:", msg)
	}
	return ExitCode(err)
}

// markRuns makes every command of the tree note that its RunE was reached: an error before
// that is cobra's, about the command line.
func markRuns(root *cobra.Command) *bool {
	ran := new(bool)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if run := c.RunE; run != nil {
			c.RunE = func(cmd *cobra.Command, args []string) error {
				*ran = true
				return run(cmd, args)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return ran
}
