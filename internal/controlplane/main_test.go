package controlplane

import (
	"os"
	"testing"

	"github.com/fleetform/fleetform/internal/testutil/fuzztest"
)

func TestMain(m *testing.M) { os.Exit(fuzztest.Main(m)) }
