package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/testutil/clitest"
)

// TestEveryCommandHasExamples: every command's --help shows examples, and every example
// names a real command with flags it has (examples rot silently otherwise).
func TestEveryCommandHasExamples(t *testing.T) {
	clitest.CheckExamples(t, func() *cobra.Command {
		return newRoot(&env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard})
	})
}
