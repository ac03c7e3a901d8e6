// Command fleetform-dev holds fleetform's developer tools (internal/dev): synthetic fleets,
// simulated clusters and load tests, kept out of the product's command line.
package main

import (
	"os"

	"github.com/fleetform/fleetform/internal/dev"
)

func main() {
	os.Exit(dev.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
