package controlplane

import (
	"errors"
	"fmt"
	"strings"
)

// Severity says whether a Diagnostic fails the run.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is a problem in the control plane, located as precisely as the input allows:
// repository, file, line, object and field path, what is wrong and how to fix it.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	// Repo is the repository URL for content outside the control plane, else empty.
	Repo string `json:"repo,omitempty"`
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Kind and Name identify the object at fault, when there is one.
	Kind string `json:"kind,omitempty"`
	Name string `json:"name,omitempty"`
	// Path is the field path inside the object, e.g. spec.deploymentTargets[2].name.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
	// Hint says how to fix it.
	Hint string `json:"hint,omitempty"`
}

// Error formats the diagnostic as `file:line: Kind/name: path: message (hint)`.
func (d Diagnostic) Error() string {
	var b strings.Builder
	if d.Repo != "" {
		b.WriteString(d.Repo)
		b.WriteString(" ")
	}
	if d.File != "" {
		b.WriteString(d.File)
		if d.Line > 0 {
			fmt.Fprintf(&b, ":%d", d.Line)
		}
		b.WriteString(": ")
	}
	switch {
	case d.Kind != "":
		fmt.Fprintf(&b, "%s/%s: ", d.Kind, d.Name)
	case d.Name != "":
		fmt.Fprintf(&b, "%s: ", d.Name)
	}
	if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	if d.Hint != "" {
		fmt.Fprintf(&b, " (%s)", d.Hint)
	}
	return b.String()
}

// Source is where a document came from.
type Source struct {
	// Repo is the repository URL for documents outside the control plane, else empty.
	Repo string `json:"repo,omitempty"`
	// Commit is the commit the file was read at, when read from git.
	Commit string `json:"commit,omitempty"`
	// File is the path of the file inside its repository.
	File string `json:"file"`
	// Line is the 1-based line where the document starts.
	Line int `json:"line"`

	kind, name string
	lines      map[string]int
}

// LineOf returns the line of the field at path (as in spec.template.name), or of its closest
// recorded parent, or the document's first line.
func (s Source) LineOf(path string) int {
	for p := path; p != ""; p = parentPath(p) {
		if l, ok := s.lines[p]; ok {
			return l
		}
	}
	return s.Line
}

// Diag returns a diagnostic of severity error located at path in the document.
func (s Source) Diag(path, msg, hint string) Diagnostic {
	return Diagnostic{
		Severity: SeverityError, Repo: s.Repo, File: s.File, Line: s.LineOf(path),
		Kind: s.kind, Name: s.name, Path: path, Message: msg, Hint: hint,
	}
}

// Warn returns a diagnostic of severity warning located at path in the document.
func (s Source) Warn(path, msg, hint string) Diagnostic {
	d := s.Diag(path, msg, hint)
	d.Severity = SeverityWarning
	return d
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// HasErrors reports whether any diagnostic is an error.
func HasErrors(ds []Diagnostic) bool {
	for _, d := range ds {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

// DiagnosticError is an error located in the control plane: a problem that stops a whole
// environment from loading (its pinned commit does not exist, say).
type DiagnosticError struct{ Diagnostic Diagnostic }

func (e *DiagnosticError) Error() string { return e.Diagnostic.Error() }

// AsDiagnostics returns the diagnostics of an error: the located one it wraps (through any
// number of wrappers), or else one diagnostic with its whole message.
func AsDiagnostics(err error) []Diagnostic {
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch d := e.(type) { //nolint:errorlint // the loop unwraps one level at a time itself: the outermost diagnostic wins
		case *DiagnosticError:
			return []Diagnostic{d.Diagnostic}
		case Diagnostic:
			return []Diagnostic{d}
		}
	}
	if err == nil {
		return nil
	}
	return []Diagnostic{{Severity: SeverityError, Message: err.Error()}}
}

// DiagnosticReport are the errors and warnings of a run, split by severity (the "errors"
// and "warnings" of every -o json document).
type DiagnosticReport struct {
	Errors   []Diagnostic `json:"errors"`
	Warnings []Diagnostic `json:"warnings,omitempty"`
}

// SplitDiagnostics sorts diagnostics into errors and warnings.
func SplitDiagnostics(ds []Diagnostic) DiagnosticReport {
	out := DiagnosticReport{Errors: []Diagnostic{}}
	for _, d := range ds {
		if d.Severity == SeverityError {
			out.Errors = append(out.Errors, d)
		} else {
			out.Warnings = append(out.Warnings, d)
		}
	}
	return out
}
