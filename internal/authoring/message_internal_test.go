package authoring

import (
	"strings"
	"testing"
)

// TestCommitMessageOneLineFromInput: what a change's operations and actor say cannot add a
// paragraph or a trailer to its commit message.
func TestCommitMessageOneLineFromInput(t *testing.T) {
	msg := message(Request{Actor: "pat\nSigned-off-by: someone else"}, &Result{Operations: []string{"set config X\n\nForged paragraph"}})
	if strings.Contains(msg, "\nSigned-off-by") || strings.Contains(msg, "\nForged") || strings.Count(msg, "\n") != 3 {
		t.Errorf("the commit message takes line breaks from its input:\n%s", msg)
	}
}
