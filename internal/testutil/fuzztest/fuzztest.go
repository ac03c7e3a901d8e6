// Package fuzztest holds what the tests of the packages with fuzz targets share.
package fuzztest

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// MinimizeTime is how long `go test -fuzz` minimises a new input when -fuzzminimizetime is
// not given. Go's own default is 60 s, and its minimiser tries a number of candidates that
// grows with the square of the input's length: one new input of a few hundred bytes whose
// coverage needs all of them keeps the fuzzing worker busy, and the run at 0 execs/s, for
// up to a minute (golang/go#48820).
const MinimizeTime = "2s"

// Main runs the tests of a package with MinimizeTime as the default of
// -test.fuzzminimizetime. Call it from TestMain: os.Exit(fuzztest.Main(m)).
func Main(m *testing.M) int {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.fuzzminimizetime" })
	if !given {
		if err := flag.Set("test.fuzzminimizetime", MinimizeTime); err != nil {
			fmt.Fprintln(os.Stderr, "fuzztest:", err)
			return 2
		}
	}
	return m.Run()
}
