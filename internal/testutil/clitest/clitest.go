// Package clitest checks fleetform's command lines in tests.
package clitest

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CheckExamples checks that every command of the tree newRoot makes that is not hidden has
// examples, and that every example names a real command with flags it has (examples rot
// silently otherwise). Each example is parsed by a tree of its own, as a command line is.
func CheckExamples(t *testing.T, newRoot func() *cobra.Command) {
	t.Helper()
	root := newRoot()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, line := range strings.Split(c.Example, "\n") {
			checkExample(t, newRoot(), c.CommandPath(), line)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// checkExample parses one example line (comments and environment assignments aside) against
// the command tree.
func checkExample(t *testing.T, root *cobra.Command, of, line string) {
	t.Helper()
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return
	}
	words := shellWords(line)
	for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value before the command
		words = words[1:]
	}
	if len(words) == 0 || words[0] != root.Name() {
		t.Errorf("%s: example %q does not run %s", of, line, root.Name())
		return
	}
	cmd, args, err := root.Find(words[1:])
	if err != nil {
		t.Errorf("%s: example %q: %v", of, line, err)
		return
	}
	cmd.InitDefaultHelpFlag()
	if err := cmd.ParseFlags(args); err != nil {
		t.Errorf("%s: example %q: %v", of, line, err)
	}
	if cmd.Args != nil {
		if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
			t.Errorf("%s: example %q: %v", of, line, err)
		}
	}
	cmd.Flags().VisitAll(func(f *pflag.Flag) { // back to the defaults for the next example
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			_ = sv.Replace(nil)
		} else {
			_ = f.Value.Set(f.DefValue)
		}
		f.Changed = false
	})
}

// shellWords splits a line into words, honouring double quotes.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				words = append(words, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}
