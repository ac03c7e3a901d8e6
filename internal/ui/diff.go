package ui

import (
	"net/http"
	"strings"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// diffRow is a workload compared between two environments.
type diffRow struct {
	hub.WorkloadDiff
	Real, Expected []diffValue
}

// diffValue is a config key's values on both sides, as YAML, each with the cluster types
// that have it.
type diffValue struct {
	Key      string
	From, To []typedValue
}

// typedValue is a value and the cluster types that have it.
type typedValue struct {
	Text, ClusterTypes string
}

type diffData struct {
	Envs     []string
	From, To string
	// Compared is set once both environments are chosen; Pick when they are only proposed.
	Compared, Pick bool
	Rows           []diffRow
	Same           int
}

func (u *Handler) diff(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	envs, err := u.environmentNames(ctx)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data := diffData{From: r.URL.Query().Get("from"), To: r.URL.Query().Get("to"), Envs: envs}
	if data.From == "" && data.To == "" && len(data.Envs) > 1 { // the first link of the chain, until asked otherwise
		data.From, data.To = data.Envs[0], data.Envs[1]
		data.Pick = true
	}
	if data.From != "" && data.To != "" && !data.Pick {
		d, err := u.hub.Diff(ctx, data.From, data.To)
		if err != nil {
			u.fail(w, r, s, err)
			return
		}
		data.Compared = true
		for _, wd := range d.Workloads {
			if wd.Same {
				data.Same++
			}
			row := diffRow{WorkloadDiff: wd}
			for _, c := range wd.Config {
				v := diffValue{Key: c.Key, From: typedTexts(c.From, c.FromClusterTypes), To: typedTexts(c.To, c.ToClusterTypes)}
				if c.Expected {
					row.Expected = append(row.Expected, v)
				} else {
					row.Real = append(row.Real, v)
				}
			}
			data.Rows = append(data.Rows, row)
		}
	}
	u.render(w, r, s, "diff", "Compare environments", "diff", data)
}

// typedTexts are values as YAML, each with the cluster types (types[i]) that have it.
func typedTexts(vs []any, types [][]string) []typedValue {
	out := make([]typedValue, 0, len(vs))
	for i, v := range vs {
		t := typedValue{Text: yamlnode.Text(v)}
		if i < len(types) {
			t.ClusterTypes = strings.Join(types[i], ", ")
		}
		out = append(out, t)
	}
	return out
}
