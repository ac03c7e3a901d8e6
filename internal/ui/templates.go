package ui

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// pageNames are the templates/*.html files that are pages (each is parsed with layout.html).
var pageNames = []string{"overview", "environment", "workload", "clustertype", "cluster", "clusters", "diff", "promotions", "explain", "author", "change", "onboard", "audit", "signin", "me", "error"}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"short": func(s string) string { return s[:min(len(s), 7)] },
		"ago":   ago,
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"join":      strings.Join,
		"hasPrefix": strings.HasPrefix,
		"add":       func(a, b int) int { return a + b },
		"pct":       func(n, of int) int { return pct(n, of) },
		"dict":      dict,
		"list":      func(s ...string) []string { return s },
		// levels are the config form's precedence levels: value and label.
		"levels": func() [][2]string {
			return [][2]string{{"environment", "the whole environment"}, {"selector", "cluster types with labels"},
				{"cluster-type", "a cluster type"}, {"workload", "a workload"}, {"deployment-target", "a deployment target"}}
		},
	}
}

// dict makes a map of its key and value arguments, to pass several values to a template.
func dict(kv ...any) (map[string]any, error) {
	if len(kv)%2 != 0 {
		return nil, fmt.Errorf("dict: %d arguments, want key and value pairs", len(kv))
	}
	out := make(map[string]any, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			return nil, fmt.Errorf("dict: key %v is not a string", kv[i])
		}
		out[k] = kv[i+1]
	}
	return out, nil
}

func pct(n, of int) int {
	if of <= 0 {
		return 0
	}
	return n * 100 / of
}

// ago is a time relative to now, rounded for people.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(templateFuncs()).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("ui template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}
