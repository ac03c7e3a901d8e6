package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleetform/fleetform/internal/app"
	"github.com/fleetform/fleetform/internal/cli"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

var update = flag.Bool("update", false, "rewrite the expected output in test scripts and golden files")

func TestMain(m *testing.M) {
	if os.Getenv(app.RenderWorkerEnv) == "1" { // the app commands' chart render worker is this binary
		os.Exit(app.ServeRenderWorker(os.Stdin, os.Stdout))
	}
	testscript.Main(m, map[string]func(){
		"fleetform": func() {
			os.Exit(cli.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"fleetform-stall-at-pack": stallAtPackMain,
	})
}

// TestScripts runs the command-line scripts in testdata/script. Scripts see:
//   - $KALYPSO: Kalypso's sample control plane as a git repository (branches main, dev, stage)
//   - $SVCSRC: the sample's workload repository, and $SVCSRC_URL the URL it is registered under
//   - $MAIN: the main commit the environments are pinned to
func TestScripts(t *testing.T) {
	fx := gittest.FixtureDir(t)
	testscript.Run(t, testscript.Params{
		Dir:           filepath.Join("testdata", "script"),
		UpdateScripts: *update,
		Setup: func(env *testscript.Env) error {
			k, err := gittest.BuildKalypso(fx, filepath.Join(env.WorkDir, ".fixture"))
			if err != nil {
				return err
			}
			env.Setenv("KALYPSO", k.ControlPlane.Dir)
			env.Setenv("SVCSRC", k.SvcSrc.Dir)
			env.Setenv("SVCSRC_URL", gittest.SvcSrcURL)
			env.Setenv("MAIN", k.Main.String())
			return nil
		},
	})
}
