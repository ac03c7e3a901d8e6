// Package hostilehttp reads the hostile-request corpora (testdata/hostile/hub and
// testdata/hostile/serve): each txtar file is one HTTP request, written as a template, and
// the answer it must get.
package hostilehttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/rogpeppe/go-internal/txtar"
)

// Case is one file of a corpus.
type Case struct {
	// Request is a template: METHOD PATH, header lines, a blank line, the body.
	Request string
	Status  int
	// Code is the JSON error's code ("": not checked).
	Code string
	// Contains and Lacks are texts the answer's body must and must not contain.
	Contains, Lacks []string
	// Headers are header values the answer must have (name, value).
	Headers [][2]string
}

// Files lists the corpus in dir, failing the test when it is empty.
func Files(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in %s: %v", dir, err)
	}
	return files
}

// Read reads a case: its request and want sections.
func Read(t *testing.T, file string) Case {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var c Case
	for _, f := range ar.Files {
		switch f.Name {
		case "request":
			c.Request = string(f.Data)
		case "want":
			if err := c.parseWant(string(f.Data)); err != nil {
				t.Fatalf("%s: want: %v", file, err)
			}
		default:
			t.Fatalf("%s: unknown section %q (want request and want)", file, f.Name)
		}
	}
	if c.Request == "" || c.Status == 0 {
		t.Fatalf("%s: a case needs a request and a status", file)
	}
	return c
}

// parseWant reads "status: N", "code: C", and any number of "contains: TEXT",
// "lacks: TEXT" and "header: NAME: VALUE" lines.
func (c *Case) parseWant(s string) error {
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		key, value, ok := strings.Cut(line, ":")
		value = strings.TrimSpace(value)
		switch {
		case !ok:
			return fmt.Errorf("line %q: want KEY: VALUE", line)
		case key == "status":
			n, err := strconv.Atoi(value)
			if err != nil {
				return err
			}
			c.Status = n
		case key == "code":
			c.Code = value
		case key == "contains":
			c.Contains = append(c.Contains, value)
		case key == "lacks":
			c.Lacks = append(c.Lacks, value)
		case key == "header":
			name, v, ok := strings.Cut(value, ":")
			if !ok {
				return fmt.Errorf("line %q: want header: NAME: VALUE", line)
			}
			c.Headers = append(c.Headers, [2]string{strings.TrimSpace(name), strings.TrimSpace(v)})
		default:
			return fmt.Errorf("unknown key %q", key)
		}
	}
	return nil
}

// NewRequest executes the case's request template with funcs and builds the request to base
// (a URL without a path).
func (c Case) NewRequest(t *testing.T, base string, funcs template.FuncMap) *http.Request {
	t.Helper()
	tmpl, err := template.New("request").Funcs(funcs).Parse(c.Request)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, nil); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(&buf)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("request line: %v", err)
	}
	method, target, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok {
		t.Fatalf("request line %q: want METHOD PATH", line)
	}
	headers := http.Header{}
	for {
		h, err := r.ReadString('\n')
		if strings.TrimSpace(h) == "" || err != nil {
			break
		}
		k, v, _ := strings.Cut(h, ":")
		headers.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	body, _ := io.ReadAll(r)
	body = bytes.TrimSuffix(body, []byte("\n"))
	req, err := http.NewRequestWithContext(context.Background(), method, base+target, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = headers
	return req
}

// Do sends req with client and checks the answer against the case; it returns the body.
// Secrets are texts no answer may show (name: secret).
func (c Case) Do(t *testing.T, client *http.Client, req *http.Request, secrets map[string]string) []byte {
	t.Helper()
	resp, err := client.Do(req) //nolint:gosec // a test server the case names
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	shown := body
	if len(shown) > 500 {
		shown = append(shown[:500:500], "…"...)
	}
	if resp.StatusCode != c.Status {
		t.Fatalf("%s %s: status %d, want %d: %s", req.Method, req.URL.Path, resp.StatusCode, c.Status, shown)
	}
	if c.Code != "" {
		var e struct{ Code, Error string }
		if err := json.Unmarshal(body, &e); err != nil || e.Code != c.Code || e.Error == "" {
			t.Errorf("error %+v (%v), want code %q with a message", e, err, c.Code)
		}
	}
	for _, h := range c.Headers {
		if got := resp.Header.Get(h[0]); got != h[1] {
			t.Errorf("header %s: %q, want %q", h[0], got, h[1])
		}
	}
	for _, want := range c.Contains {
		if !strings.Contains(string(body), want) {
			t.Errorf("the answer does not contain %q: %s", want, shown)
		}
	}
	for _, text := range c.Lacks {
		if strings.Contains(string(body), text) {
			t.Errorf("the answer contains %q: %s", text, shown)
		}
	}
	for name, secret := range secrets {
		if strings.Contains(string(body), secret) || strings.Contains(strings.Join(resp.Header.Values("Location"), " "), secret) {
			t.Errorf("the answer shows the %s secret: %s", name, shown)
		}
	}
	if resp.Header.Get("Content-Type") == "application/json" && !json.Valid(body) {
		t.Errorf("the answer says it is JSON, but is not: %s", shown)
	}
	return body
}
