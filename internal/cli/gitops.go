package cli

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/fleetform/fleetform/internal/fleet"
)

// gitopsOptions are the flags of plan and apply that say where the tree goes.
type gitopsOptions struct {
	repo      string
	branch    string
	path      string
	threshold float64
	diff      bool
}

func (o *gitopsOptions) bind(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&o.repo, "gitops", "", "GitOps repository (URL or local path); default: the environment's GitOpsRepo")
	f.StringVar(&o.branch, "branch", "", "branch to write; default: the GitOpsRepo's branch, else the environment name")
	f.StringVar(&o.path, "path", "", "folder inside the repository; default: the GitOpsRepo's path")
	f.Float64Var(&o.threshold, "mass-delete-threshold", 0.5, "largest fraction of owned deployment-target folders an apply may remove")
}

// write is how the flags say to write, with rendering progress reported to prog.
func (o *gitopsOptions) write(prog *progress) fleet.WriteOptions {
	return fleet.WriteOptions{MassDeleteThreshold: o.threshold, Diff: o.diff, Progress: prog.update}
}

// progress reports rendering progress: a bar on a terminal, log lines otherwise.
type progress struct {
	e       *env
	label   string
	tty     bool
	start   time.Time
	mu      sync.Mutex
	last    time.Time
	drawn   bool
	minShow time.Duration
}

func newProgress(e *env, label string) *progress {
	p := &progress{e: e, label: label, start: time.Now(), minShow: 500 * time.Millisecond}
	if f, ok := e.Stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// update is called from several goroutines with the assignments done so far.
func (p *progress) update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	elapsed := now.Sub(p.start)
	every := 2 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if elapsed < p.minShow || (now.Sub(p.last) < every && done < total) {
		return
	}
	p.last = now
	rate := float64(done) / elapsed.Seconds()
	if !p.tty {
		p.e.Logger.Info(p.label, "done", done, "total", total, "per_second", int(rate))
		return
	}
	const width = 30
	filled := width * done / max(total, 1)
	fmt.Fprintf(p.e.Stderr, "\r%s [%s%s] %d/%d (%.0f/s)", p.label, strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), done, total, rate)
	p.drawn = true
}

// finish ends the progress line.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.e.Stderr)
	}
}
