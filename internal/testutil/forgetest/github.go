package forgetest

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// GitHub is a fake of GitHub's REST API as GitHub Enterprise Server serves it (under
// /api/v3), for the calls that open a pull request: it records every call and the payload
// of each pull request created, and answers as GitHub does. Serve it next to the git server
// (gittest.GitHandler) and name srv.URL+"/api/v3/" as the forge URL.
type GitHub struct {
	// Token is the bearer token every call must carry ("": not checked).
	Token string

	mu      sync.Mutex
	calls   []string
	created []map[string]any
	errs    []string
}

var (
	createPull = regexp.MustCompile(`^POST /api/v3/repos/([^/]+/[^/]+)/pulls$`)
	addLabels  = regexp.MustCompile(`^POST /api/v3/repos/[^/]+/[^/]+/issues/\d+/labels$`)
)

// ServeHTTP answers a call, or records it as unexpected (Errors) with 404.
func (g *GitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	call := r.Method + " " + r.URL.Path
	g.calls = append(g.calls, call)
	if g.Token != "" && r.Header.Get("Authorization") != "Bearer "+g.Token {
		g.errs = append(g.errs, call+": without the token")
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch {
	case createPull.MatchString(call):
		var body map[string]any
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &body); err != nil {
			g.errs = append(g.errs, call+": "+err.Error())
		}
		g.created = append(g.created, body)
		n, repo := len(g.created), createPull.FindStringSubmatch(call)[1]
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"number": n, "state": "open", "title": body["title"], "body": body["body"],
			"html_url": PullURL(repo, n),
			"user":     map[string]any{"login": "fleetform-bot"},
			"head":     map[string]any{"ref": body["head"], "repo": map[string]any{"full_name": repo}},
			"base":     map[string]any{"ref": body["base"], "repo": map[string]any{"full_name": repo}},
		})
	case addLabels.MatchString(call):
		_ = json.NewEncoder(w).Encode([]map[string]string{{"name": "fleetform"}})
	default:
		g.errs = append(g.errs, "unexpected call "+call)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
	}
}

// Calls are the calls made, in order ("POST /api/v3/repos/org/platform/pulls").
func (g *GitHub) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// Created are the payloads of the pull requests created, in order; pull request n (from 1)
// is Created()[n-1].
func (g *GitHub) Created() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.created)
}

// Errors are the calls the fake did not expect or that came without the token.
func (g *GitHub) Errors() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.errs)
}

// PullURL is the html_url of pull request n of repo (owner/name).
func PullURL(repo string, n int) string {
	return "https://github.example/" + repo + "/pull/" + strconv.Itoa(n)
}
