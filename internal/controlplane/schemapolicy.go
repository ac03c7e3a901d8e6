package controlplane

import (
	"fmt"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// SchemaPolicy returns the environment's configSchemaPolicy (block by default), and a
// diagnostic when the Environment sets a value that is neither block nor warn (block is
// used then).
func (s *Snapshot) SchemaPolicy() (string, *Diagnostic) {
	if s.EnvironmentObject == nil {
		return v1alpha1.ConfigSchemaBlock, nil
	}
	switch p := s.EnvironmentObject.Spec.ConfigSchemaPolicy; p {
	case "", v1alpha1.ConfigSchemaBlock:
		return v1alpha1.ConfigSchemaBlock, nil
	case v1alpha1.ConfigSchemaWarn:
		return p, nil
	default:
		d := s.EnvironmentObject.Source.Diag("spec.configSchemaPolicy", fmt.Sprintf("unknown configSchemaPolicy %q", p), "use block or warn")
		return v1alpha1.ConfigSchemaBlock, &d
	}
}
