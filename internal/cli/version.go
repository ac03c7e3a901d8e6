package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
)

// version is set at build time with -ldflags "-X github.com/fleetform/fleetform/internal/cli.version=v1.2.3".
var version = ""

// Version returns the build's version: the ldflags value, else the module version.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// versionJSON is `version -o json`.
type versionJSON struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, when the build recorded it.
	Commit    string `json:"commit,omitempty"`
	Modified  bool   `json:"modified,omitempty"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func buildVersion() versionJSON {
	v := versionJSON{Version: Version(), GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Commit = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	return v
}

func newVersionCmd(e *env) *cobra.Command {
	var out command.Output
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Example: "  fleetform version\n" +
			"  fleetform version -o json",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := out.Check(); err != nil {
				return err
			}
			v := buildVersion()
			return out.Write(e.Stdout, v, func(w io.Writer) error {
				_, err := fmt.Fprintln(w, "fleetform", v.Version)
				return err
			})
		},
	}
	out.Bind(cmd)
	return cmd
}
