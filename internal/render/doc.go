// Package render turns scheduled, composed assignments into the files of the GitOps tree,
// with Go text/template and a hardened function set. It is pure: values in, bytes out.
// Output is deterministic: the same input renders byte-identical files.
//
// The stage is render.go (what a template sees, Data, and the files of an assignment,
// Files), renderer.go (Render, and the Renderer that renders an environment's assignments
// in batches, as package gitops asks for them) and engine.go (the templates of a control
// plane, parsed once). typekey.go digests the inputs of each cluster type and workload, so
// that a caller that recorded them renders only what changed.
//
// The rest makes rendering safe and fast, and changes nothing a template can observe:
// funcs.go and bounded.go are the hardened sprig function set (no environment, files or
// network), limits.go and size.go bound each assignment's time and memory, regex.go and
// memo.go cache what templates compute again and again, and rewrite.go, fastexec.go and
// fastcall.go run a template's parse tree without reflection where they can, falling back
// to text/template (which they must match, as their tests check) whenever they cannot.
// They share the execution state that enforces the limits, which is why they are not a
// package of their own.
//
// It imports the stages before it (controlplane, schedule, compose); net/http, database/sql,
// os/exec and go-git are denied to it (.golangci.yaml).
package render
