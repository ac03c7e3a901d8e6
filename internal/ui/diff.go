package ui

import (
	"net/http"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/yamlnode"
)

// diffRow is a workload compared between two environments.
type diffRow struct {
	hub.WorkloadDiff
	Real, Expected []diffValue
}

// diffValue is a config key's values on both sides, as YAML.
type diffValue struct {
	Key      string
	From, To []string
}

type diffData struct {
	Envs     []string
	From, To string
	// Compared is set once both environments are chosen.
	Compared bool
	Rows     []diffRow
	Same     int
}

func (u *Handler) diff(w http.ResponseWriter, r *http.Request, s session) {
	ctx := r.Context()
	envs, err := u.environments(ctx)
	if err != nil {
		u.fail(w, r, s, err)
		return
	}
	data := diffData{From: r.URL.Query().Get("from"), To: r.URL.Query().Get("to")}
	for _, e := range envs {
		data.Envs = append(data.Envs, e.name)
	}
	if data.From != "" && data.To != "" {
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
				v := diffValue{Key: c.Key, From: texts(c.From), To: texts(c.To)}
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

func texts(vs []any) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, yamlnode.Text(v))
	}
	return out
}
