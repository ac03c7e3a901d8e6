package cli

import "io"

// SetStdoutIsTerminal replaces the terminal check of onboard cluster for a test.
func SetStdoutIsTerminal(f func(io.Writer) bool) (restore func()) {
	old := stdoutIsTerminal
	stdoutIsTerminal = f
	return func() { stdoutIsTerminal = old }
}

// IsTerminal is onboard cluster's terminal check.
var IsTerminal = isTerminal

// AgentImage is onboard cluster's choice of the agent's image.
var AgentImage = agentImage
