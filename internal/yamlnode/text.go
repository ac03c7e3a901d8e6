package yamlnode

import (
	"fmt"
	"strings"

	"sigs.k8s.io/yaml"
)

// Text shows a configuration value to a person: a scalar as itself, a mapping or a list
// as YAML (keys sorted), never Go's map[...] notation. Multi-line results end without a
// newline.
func Text(v any) string {
	switch v.(type) {
	case map[string]any, []any:
		b, err := yaml.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return strings.TrimSuffix(string(b), "\n")
	case nil:
		return "null"
	}
	return fmt.Sprint(v)
}
