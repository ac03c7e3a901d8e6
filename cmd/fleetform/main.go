// Command fleetform is the fleetform command line.
package main

import (
	"os"
	_ "time/tzdata" // freeze windows name IANA time zones; hosts without zoneinfo still know them

	"github.com/fleetform/fleetform/internal/cli"
)

func main() {
	os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
