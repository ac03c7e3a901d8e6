package render_test

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/render"
)

const shell = "/bin/sh"

func needShell(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(shell); err != nil {
		t.Skipf("%s not available: %v", shell, err)
	}
}

// checkShell runs sh -n on a rendered shell file.
func checkShell(t *testing.T, where string, content []byte) {
	t.Helper()
	if _, err := os.Stat(shell); err != nil {
		return // TestEnvFileRoundTrip reports the skip
	}
	f := filepath.Join(t.TempDir(), "check.sh")
	if err := os.WriteFile(f, content, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), shell, "-n", f).CombinedOutput(); err != nil {
		t.Errorf("%s: sh -n: %v\n%s\n%s", where, err, out, content)
	}
}

// TestEnvFileRoundTrip sources every rendered platform-config.sh in a shell and checks that
// each key is exported with exactly its composed value (structured values as JSON).
func TestEnvFileRoundTrip(t *testing.T) {
	needShell(t)
	checked := 0
	for env, out := range renderGolden(t) {
		for _, a := range out.Assignments {
			if a.Files.ConfigName != render.ConfigShFile {
				continue
			}
			where := env + "/" + a.Dir() + "/" + render.ConfigShFile
			f := filepath.Join(t.TempDir(), render.ConfigShFile)
			if err := os.WriteFile(f, a.Files.Config, 0o644); err != nil {
				t.Fatal(err)
			}
			want := map[string]string{}
			for k, v := range a.Config.Data {
				s, ok := v.(string)
				if !ok {
					b, err := json.Marshal(v)
					if err != nil {
						t.Fatal(err)
					}
					s = string(b)
				}
				want[shellName(k)] = s
			}
			names := slices.Sorted(maps.Keys(want))
			// The inner shell sees only what the file exported.
			var inner strings.Builder
			inner.WriteString("printf '%s\\0'")
			for _, n := range names {
				inner.WriteString(` "$` + n + `"`)
			}
			cmd := exec.CommandContext(t.Context(), shell, "-c", `. "$1" && exec "$0" -c "$2"`, shell, f, inner.String())
			cmd.Env = []string{}
			got, err := cmd.Output()
			if err != nil {
				t.Errorf("%s: sourcing failed: %v\n%s", where, err, a.Files.Config)
				continue
			}
			values := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
			if len(names) == 0 {
				values = nil
			}
			if len(values) != len(names) {
				t.Errorf("%s: got %d values for %d keys", where, len(values), len(names))
				continue
			}
			for i, n := range names {
				if values[i] != want[n] {
					t.Errorf("%s: $%s = %q, want %q", where, n, values[i], want[n])
				}
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no platform-config.sh was rendered")
	}
}

// shellName is how builtin/env-file names a config key.
func shellName(k string) string {
	n := regexp.MustCompile(`[^A-Za-z0-9_]`).ReplaceAllString(k, "_")
	if n == "" || (n[0] >= '0' && n[0] <= '9') {
		n = "_" + n
	}
	return n
}

// TestAnsibleCronJob runs the cron job of every rendered builtin/ansible playbook the way
// cron would, with fake flock and ansible-pull commands, and checks that ansible-pull gets
// exactly the deployment target's repository, revision and playbook as arguments, and
// that the user is the one builtin/ansible-user creates.
func TestAnsibleCronJob(t *testing.T) {
	needShell(t)
	bin := t.TempDir()
	writeScript(t, filepath.Join(bin, "flock"), `[ "$1" = -n ] && [ "$2" = "$HOME/.ansible-pull.lock" ] || exit 97; shift 2; exec "$@"`)
	writeScript(t, filepath.Join(bin, "ansible-pull"), `printf '%s\0' "$@"`)
	checked := 0
	for env, out := range renderGolden(t) {
		for _, a := range out.Assignments {
			if !strings.HasPrefix(string(a.Files.Reconciler), "- name:") {
				continue // not a playbook
			}
			where := env + "/" + a.Dir()
			cron := findTask(t, where+"/"+render.ReconcilerFile, a.Files.Reconciler, "ansible.builtin.cron")
			user := findTask(t, where+"/"+render.NamespaceFile, a.Files.Namespace, "ansible.builtin.user")
			if cron["user"] != user["name"] {
				t.Errorf("%s: cron job runs as %v, but the namespace playbook creates user %v", where, cron["user"], user["name"])
			}
			if u, _ := user["name"].(string); len(u) > 32 || u == "" {
				t.Errorf("%s: user name %q: want 1 to 32 characters", where, u)
			}
			home := t.TempDir()
			cmd := exec.CommandContext(t.Context(), shell, "-c", cronCommand(cron["job"].(string)))
			cmd.Env = []string{"HOME=" + home, "PATH=" + bin + ":/usr/bin:/bin"}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: cron job failed: %v\n%s", where, err, out)
				continue
			}
			log, err := os.ReadFile(filepath.Join(home, "ansible-pull.log"))
			if err != nil {
				t.Errorf("%s: no log: %v", where, err)
				continue
			}
			got := strings.Split(strings.TrimSuffix(string(log), "\x00"), "\x00")
			m := a.Target.Manifests
			want := []string{"--only-if-changed", "--url", m["repo"]}
			if rev := firstNonEmpty(m["commit"], m["tag"], m["branch"]); rev != "" {
				want = append(want, "--checkout", rev)
			}
			if m["path"] != "" {
				want = append(want, m["path"])
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: ansible-pull got arguments %q, want %q", where, got, want)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no builtin/ansible playbook was rendered")
	}
}

// cronCommand is what cron hands to the shell for a crontab command: the text up to the
// first unescaped %, with \% turned into %.
func cronCommand(job string) string {
	var b strings.Builder
	for i := 0; i < len(job); i++ {
		switch {
		case job[i] == '\\' && i+1 < len(job) && job[i+1] == '%':
			b.WriteByte('%')
			i++
		case job[i] == '%':
			return b.String()
		default:
			b.WriteByte(job[i])
		}
	}
	return b.String()
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// findTask returns the arguments of the first task calling module in a playbook.
func findTask(t *testing.T, where string, playbook []byte, module string) map[string]any {
	t.Helper()
	var plays []struct {
		Tasks []map[string]any `yaml:"tasks"`
	}
	if err := yaml.Unmarshal(playbook, &plays); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, p := range plays {
		for _, task := range p.Tasks {
			if args, ok := task[module].(map[string]any); ok {
				return args
			}
		}
	}
	t.Fatalf("%s: no %s task", where, module)
	return nil
}

func writeScript(t *testing.T, file, body string) {
	t.Helper()
	if err := os.WriteFile(file, []byte("#!"+shell+"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}
