package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// unitFile is a parsed systemd unit: section, then key, then its values in order.
type unitFile map[string]map[string][]string

// parseUnit reads a unit file as systemd does: [Section] headers, Key=Value lines,
// comments starting with # or ;, lines ending in a backslash continued.
func parseUnit(t *testing.T, data []byte) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		for strings.HasSuffix(line, `\`) && i+1 < len(lines) {
			i++
			line = strings.TrimSuffix(line, `\`) + " " + strings.TrimSpace(lines[i])
		}
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] == nil {
				u[section] = map[string][]string{}
			}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("fleetform.service:%d: %q is not Key=Value in a section", i+1, line)
			}
			key = strings.TrimSpace(key)
			u[section][key] = append(u[section][key], strings.TrimSpace(value))
		}
	}
	return u
}

// get returns the last value of a key (the one systemd uses for single-valued keys).
func (u unitFile) get(section, key string) string {
	values := u[section][key]
	if len(values) == 0 {
		return ""
	}
	return values[len(values)-1]
}

func TestSystemdUnit(t *testing.T) {
	u := parseUnit(t, readRepoFile(t, "deploy", "systemd", "fleetform.service"))
	for _, kv := range []struct{ key, want string }{
		{"Type", "exec"},
		{"DynamicUser", "yes"},
		{"StateDirectory", "fleetform"},
		{"EnvironmentFile", "/etc/fleetform/fleetform.env"},
		{"ProtectSystem", "strict"},
		{"ProtectHome", "yes"},
		{"PrivateTmp", "yes"},
		{"NoNewPrivileges", "yes"},
		{"CapabilityBoundingSet", ""},
		{"RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6"},
		{"KillSignal", "SIGTERM"},
		{"Restart", "on-failure"},
	} {
		if _, set := u["Service"][kv.key]; !set || u.get("Service", kv.key) != kv.want {
			t.Errorf("[Service] %s=%q, want %q", kv.key, u.get("Service", kv.key), kv.want)
		}
	}
	if u.get("Install", "WantedBy") != "multi-user.target" {
		t.Error("[Install] WantedBy=multi-user.target is missing")
	}
	if !slices.Contains(u["Unit"]["After"], "network-online.target") {
		t.Error("the unit does not start after network-online.target")
	}

	execStart := strings.Fields(u.get("Service", "ExecStart"))
	if len(execStart) < 2 || execStart[0] != "/usr/local/bin/fleetform" {
		t.Fatalf("ExecStart %q: want /usr/local/bin/fleetform serve ...", execStart)
	}
	args := execStart[1:]
	for _, want := range [][2]string{{"--addr", "127.0.0.1:8080"}, {"--data-dir", "${STATE_DIRECTORY}"}, {"--config", "/etc/fleetform/fleetform.yaml"}} {
		if i := slices.Index(args, want[0]); i < 0 || i+1 >= len(args) || args[i+1] != want[1] {
			t.Errorf("ExecStart %q: want %s %s", args, want[0], want[1])
		}
	}
}

// systemdServeArgs returns the arguments of fleetform in the unit's ExecStart, with the
// state directory systemd would give.
func systemdServeArgs(t *testing.T) []string {
	t.Helper()
	u := parseUnit(t, readRepoFile(t, "deploy", "systemd", "fleetform.service"))
	execStart := strings.Fields(u.get("Service", "ExecStart"))
	if len(execStart) < 2 {
		t.Fatalf("ExecStart %q has no arguments", execStart)
	}
	args := execStart[1:]
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "${STATE_DIRECTORY}", "/var/lib/fleetform")
	}
	return args
}

// TestSystemdExamples: the config example is one fleetform accepts; the secrets example
// sets the variables fleetform reads (and those its credentials name) and holds no secret.
func TestSystemdExamples(t *testing.T) {
	config := readRepoFile(t, "deploy", "systemd", "fleetform.yaml.example")
	validateConfigFile(t, "deploy/systemd/fleetform.yaml.example", config)

	set := map[string]string{}
	for i, line := range strings.Split(string(readRepoFile(t, "deploy", "systemd", "fleetform.env.example")), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok || !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`).MatchString(name) {
			t.Errorf("fleetform.env.example:%d: %q is not NAME=value", i+1, line)
			continue
		}
		if value != "" {
			t.Errorf("fleetform.env.example:%d: %s has a value; the example holds no secret", i+1, name)
		}
		set[name] = value
	}
	want := []string{"FLEETFORM_HUB_ADMIN_TOKEN", "FLEETFORM_WEBHOOK_SECRET"}
	for _, m := range regexp.MustCompile(`(?m)^\s*tokenEnv:\s*(\S+)`).FindAllStringSubmatch(string(config), -1) {
		want = append(want, m[1])
	}
	for _, name := range want {
		if _, ok := set[name]; !ok {
			t.Errorf("fleetform.env.example does not set %s", name)
		}
	}
}

// TestSystemdAnalyze runs systemd-analyze on the unit: verify (unknown keys, bad values,
// missing commands) and security (the exposure level, 0 to 10, stays at 2.0 or below).
func TestSystemdAnalyze(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd): the unit is only parsed (TestSystemdUnit)")
	}
	// The unit names /usr/local/bin/fleetform, which verify requires to exist: point it at
	// an executable that does.
	bin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.Replace(string(readRepoFile(t, "deploy", "systemd", "fleetform.service")),
		"ExecStart=/usr/local/bin/fleetform ", "ExecStart="+bin+" ", 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "fleetform.service")
	if err := os.WriteFile(path, []byte(unit), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"verify", "--man=no", path},
		{"security", "--offline=yes", "--threshold=20", "--no-pager", path}, // in tenths
	} {
		cmd := exec.CommandContext(t.Context(), analyze, args...) //nolint:gosec // systemd-analyze on the unit of this repository
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("systemd-analyze %s: %v\n%s", args[0], err, out)
			continue
		}
		if args[0] == "verify" && len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify warns:\n%s", out)
		}
		if args[0] == "security" && !strings.Contains(string(out), "Overall exposure level for fleetform.service") {
			t.Errorf("systemd-analyze security printed no exposure level:\n%s", out)
		}
	}
}
