package app

import (
	"regexp"
	"testing"
)

// TestHelmVersionIsTheRelease: .Capabilities.HelmVersion.Version is the whole version of the
// Helm SDK's release (v3.22.0, as that helm binary reports it), not only its minor version,
// so that a chart comparing it (semverCompare) decides as under helm.
func TestHelmVersionIsTheRelease(t *testing.T) {
	caps, err := Capabilities{}.helm()
	if err != nil {
		t.Fatal(err)
	}
	if v := caps.HelmVersion.Version; !regexp.MustCompile(`^v3\.\d+\.\d+$`).MatchString(v) {
		t.Errorf(".Capabilities.HelmVersion.Version = %q, want the release's v3.MINOR.PATCH", v)
	}
}
