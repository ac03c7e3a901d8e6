package controlplane

import (
	"github.com/fleetform/fleetform/api/v1alpha1"
)

// DecodeWorkloads decodes the Workload documents of one file (an application's
// workload.yaml) strictly, as the control plane's are decoded. Documents of other kinds are
// reported; documents that fail are reported and skipped. src names the file (and its
// repository and commit) in the diagnostics and in each returned Workload's Source.
func DecodeWorkloads(data []byte, src Source) ([]*Workload, []Diagnostic) {
	docs, diags := decodeFile(data, src)
	var out []*Workload
	for _, d := range docs {
		if d.broken {
			continue
		}
		w, ok := d.object.(*v1alpha1.Workload)
		if !ok {
			diags = append(diags, d.source.Diag("kind", "a "+d.kind+" in a workload file", "a workload file holds Workload documents only"))
			continue
		}
		out = append(out, &Workload{Workload: w, Source: d.source})
	}
	return out, diags
}
