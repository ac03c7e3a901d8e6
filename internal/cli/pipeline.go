package cli

import (
	"context"

	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/pipeline"
	"github.com/fleetform/fleetform/internal/render"
)

// runPipeline loads env and runs the pipeline up to the given stage (pipeline.Load), with
// the CLI's exit code on failure.
func runPipeline(ctx context.Context, cp *controlplane.ControlPlane, env string, upTo pipeline.Stage, opts render.Options) (*pipeline.Run, error) {
	r, err := pipeline.Load(ctx, cp, env, upTo, opts)
	if err != nil {
		return nil, failed(ExitFailed, err)
	}
	return r, nil
}

func renderDefaults() render.Options { return render.Options{} }
