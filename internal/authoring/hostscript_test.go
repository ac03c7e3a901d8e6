package authoring

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// skeleton is a shell script with every word made of single-quoted strings (as sh reads
// them: no escapes inside) and escaped characters ('\” is a quote between two strings)
// replaced by W, and each comment by #: a value that left its quoting would change it.
func skeleton(script string) (string, bool) {
	words, ok := quotedWords(script)
	if !ok {
		return "", false
	}
	lines := strings.Split(regexp.MustCompile(`[QE]+`).ReplaceAllString(words, "W"), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			lines[i] = "#"
		}
	}
	return strings.Join(lines, "\n"), true
}

// quotedWords replaces each single-quoted string by Q and each escaped character by E.
func quotedWords(script string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(script); i++ {
		switch c := script[i]; {
		case c == '#' && (i == 0 || strings.IndexByte(" \t\n", script[i-1]) >= 0): // a comment, to the end of its line
			end := strings.IndexByte(script[i:], '\n')
			if end < 0 {
				end = len(script) - i
			}
			b.WriteByte('#')
			i += end - 1
		case c == '\'':
			end := strings.IndexByte(script[i+1:], '\'')
			if end < 0 {
				return "", false // an unterminated string
			}
			b.WriteByte('Q')
			i += end + 1
		case c == '\\' && i+1 < len(script):
			b.WriteString("E")
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// hostScript is the host script of a cluster onboarded with these values, or "" when
// onboarding refuses them.
func hostScript(t *testing.T, repo, branch, folder, name, hub string) string {
	t.Helper()
	b, err := ClusterManifests(ClusterOptions{Name: name, Environment: "prod", ClusterType: "vm-line", Reconciler: ReconcilerHost,
		GitOps: GitOpsSource{Repo: repo, Branch: branch, Path: folder}, Hub: hub, Token: "ff_token"})
	if err != nil {
		return ""
	}
	return b.Script()
}

// checkHostScript: the script parses (sh -n) and, quoted strings aside, is the script of
// plain values: no value became a command, a redirection or the end of a quoted string.
func checkHostScript(t *testing.T, script string) {
	t.Helper()
	want, _ := skeleton(hostScript(t, "https://git.example.com/x.git", "main", "clusters", "vm-3", "https://hub.example.com"))
	got, ok := skeleton(script)
	if !ok || got != want {
		t.Fatalf("the script's commands changed:\n%s\nskeleton:\n%s\nwant:\n%s", script, got, want)
	}
	cmd := exec.CommandContext(t.Context(), "sh", "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sh -n: %v\n%s\n%s", err, out, script)
	}
}

// TestHostScriptHostileValues: values that once made the host script run commands as root
// (a newline and a command after a comment, a line ending the heredoc, an ExecStartPre= in
// the unit) are refused or stay inside their quotes.
func TestHostScriptHostileValues(t *testing.T) {
	for _, c := range []struct{ repo, branch, folder string }{
		{"https://git.example.com/x.git #\ntouch /tmp/pwned #", "main", "clusters"},
		{"https://git.example.com/x.git", "main\nExecStartPre=/bin/touch /tmp/pwned", "clusters"},
		{"https://git.example.com/x.git", "main", "clusters\nFLEETFORM_EOF\ntouch /tmp/pwned"},
		{"https://git.example.com/x.git'; touch /tmp/pwned; '", "main", "clusters"},
		{"https://git.example.com/$(touch /tmp/pwned)`id`", "m\"a%i$HOME", "a b/c"},
	} {
		script := hostScript(t, c.repo, c.branch, c.folder, "vm-3", "https://hub.example.com")
		if strings.ContainsAny(c.repo+c.branch+c.folder, "\n") {
			if script != "" {
				t.Errorf("%q %q %q: onboarded, want a control character refused:\n%s", c.repo, c.branch, c.folder, script)
			}
			continue
		}
		checkHostScript(t, script)
		if c.branch == "m\"a%i$HOME" && !strings.Contains(script, `--branch "m\"a%%i$$HOME"`) {
			t.Errorf("the branch is not quoted for systemd:\n%s", script)
		}
	}
}

func FuzzHostScript(f *testing.F) {
	f.Add("https://git.example.com/x.git", "main", "clusters", "vm-3", "https://hub.example.com")
	f.Add("https://git.example.com/x.git'", "ma'in", "a b", "vm", "")
	f.Fuzz(func(t *testing.T, repo, branch, folder, name, hub string) {
		if hub == "" {
			hub = "https://hub.example.com" // the skeleton compared is the one with a hub
		}
		if script := hostScript(t, repo, branch, folder, name, hub); script != "" {
			checkHostScript(t, script)
		}
	})
}

// TestOnboardingNeverShowsCredentials: a GitOps URL with a user, a password or a token in its
// query is given to the cluster without them (Flux's GitRepository reads them from a Secret),
// and a note says how to give them; no object, script or field holds them.
func TestOnboardingNeverShowsCredentials(t *testing.T) {
	for _, rec := range []string{ReconcilerFlux, ReconcilerArgoCD, ReconcilerHost} {
		b, err := ClusterManifests(ClusterOptions{Name: "c1", Environment: "dev", ClusterType: "edge", Reconciler: rec,
			GitOps: GitOpsSource{Repo: "https://deploy:s3cret@git.example.com/gitops.git?token=t0ken", Branch: "dev", Path: "clusters"}})
		if err != nil {
			t.Fatal(err)
		}
		y, err := b.YAML()
		if err != nil {
			t.Fatal(err)
		}
		for what, text := range map[string]string{"objects": string(y), "script": b.Script(), "repo": b.GitOps.Repo} {
			if strings.Contains(text, "s3cret") || strings.Contains(text, "t0ken") || strings.Contains(text, "deploy@") {
				t.Errorf("%s: the %s show a credential:\n%s", rec, what, text)
			}
		}
		if len(b.Notes) != 1 || !strings.Contains(b.Notes[0], "https://git.example.com/gitops.git") {
			t.Errorf("%s: notes %q, want one saying how to give the credentials", rec, b.Notes)
		}
		if rec == ReconcilerFlux && !strings.Contains(string(y), "secretRef:\n    name: "+GitSecret) {
			t.Errorf("the GitRepository does not read the Secret %s:\n%s", GitSecret, y)
		}
	}
}
