package host

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// requireAnsible skips the test when ansible-playbook is missing, unless
// FLEETFORM_REQUIRE_ANSIBLE=1 (CI), where it fails.
func requireAnsible(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ansible-playbook"); err != nil {
		if os.Getenv("FLEETFORM_REQUIRE_ANSIBLE") == "1" {
			t.Fatalf("ansible-playbook is required (FLEETFORM_REQUIRE_ANSIBLE=1): %v", err)
		}
		t.Skip("ansible-playbook is not installed (apt-get install ansible-core); CI sets FLEETFORM_REQUIRE_ANSIBLE=1")
	}
}

// targetFiles returns the files of a deployment target folder whose playbooks, like the
// built-in templates' (an OS user and its config; a cron job), only touch root: the
// namespace playbook creates root/users/<target> and copies the platform-config.sh
// rendered next to it there; the reconciler creates root/cron/<target>, or fails. Without
// namespace, the folder has no namespace playbook (each run of Ansible takes seconds).
func targetFiles(root, target, config string, namespace, fail bool) map[string]string {
	user := filepath.Join(root, "users", target)
	namespacePlaybook := `- name: "fleetform namespace of ` + target + `"
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: create the user's home
      ansible.builtin.file:
        path: "` + user + `"
        state: directory
        mode: "0700"
    - name: copy platform-config.sh into it
      ansible.builtin.copy:
        src: "{{ playbook_dir }}/platform-config.sh"
        dest: "` + user + `/platform-config.sh"
        mode: "0600"
`
	reconciler := `- name: "fleetform reconciler of ` + target + `"
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: install the job
      ansible.builtin.file:
        path: "` + filepath.Join(root, "cron", target) + `"
        state: touch
        modification_time: preserve
        access_time: preserve
`
	if fail {
		reconciler += `    - name: pull the deployment target's repository
      ansible.builtin.fail:
        msg: "repository unreachable: boom"
`
	}
	files := map[string]string{
		target + "/reconciler.yaml":    reconciler,
		target + "/platform-config.sh": "export LOG_LEVEL='" + config + "'\n",
	}
	if namespace {
		files[target+"/namespace.yaml"] = namespacePlaybook
	}
	return files
}

func tree(targets ...map[string]string) map[string]string {
	files := map[string]string{
		"vm-line/README.md":                   "This folder contains deployment targets scheduled on the cluster type",
		"other-type/elsewhere/namespace.yaml": "- hosts: localhost\n  tasks:\n    - ansible.builtin.fail: {msg: other cluster type}\n",
	}
	for _, t := range targets {
		for p, c := range t {
			files["vm-line/"+p] = c
		}
	}
	return files
}

func exists(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Stat(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func statusOf(r hub.Report) map[string]hub.DeploymentStatus {
	out := map[string]hub.DeploymentStatus{}
	for _, d := range r.Deployments {
		out[d.DeploymentTarget] = d.Status
	}
	return out
}

func TestAgentAppliesChecksRemovesAndReports(t *testing.T) {
	requireAnsible(t)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "cron"), 0o700); err != nil { // as /var/spool/cron exists
		t.Fatal(err)
	}
	repo := gittest.NewBare(t)
	c1 := repo.Commit(t, "dev", tree(targetFiles(root, "app-a", "info", true, false), targetFiles(root, "app-b", "info", true, false)))
	newAgent := func(check bool) *Agent {
		a, err := New(Options{Cluster: "line-7", Repo: repo.URL(), Branch: "dev", ClusterType: "vm-line",
			StateDir: filepath.Join(root, "state"), Check: check})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	ctx := t.Context()

	// Check mode: playbooks run with --check; nothing changes, nothing is recorded.
	r, err := newAgent(true).Cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != hub.Compliant || len(r.Deployments) != 2 || exists(t, filepath.Join(root, "users")) || exists(t, filepath.Join(root, "state", "state.json")) {
		t.Fatalf("check mode: %+v; users created: %v", r, exists(t, filepath.Join(root, "users")))
	}

	// Apply.
	r, err = newAgent(false).Cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cluster != "line-7" || r.Revision != c1.String() || r.Status != hub.Compliant || r.GitOpsPath != "vm-line" || r.Message != "" {
		t.Fatalf("first apply: %+v", r)
	}
	for _, d := range r.Deployments {
		if d.Status != hub.Ready || d.Revision != c1.String() {
			t.Fatalf("first apply: %+v", d)
		}
	}
	for _, target := range []string{"app-a", "app-b"} {
		if got := read(t, filepath.Join(root, "users", target, "platform-config.sh")); got != "export LOG_LEVEL='info'\n" || !exists(t, filepath.Join(root, "cron", target)) {
			t.Fatalf("%s: config %q, cron job %v", target, got, exists(t, filepath.Join(root, "cron", target)))
		}
	}

	// Next commit: app-b disappears, app-a's config changes, app-c fails.
	c2 := repo.Commit(t, "dev", tree(targetFiles(root, "app-a", "debug", true, false), targetFiles(root, "app-c", "info", false, true)))
	r, err = newAgent(false).Cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]hub.DeploymentStatus{"app-a": hub.Ready, "app-c": hub.Failed}
	if got := statusOf(r); len(got) != 2 || got["app-a"] != want["app-a"] || got["app-c"] != want["app-c"] {
		t.Fatalf("second apply: deployments %v, want %v", got, want)
	}
	if r.Revision != c2.String() || r.Status != hub.NonCompliant || !strings.Contains(r.Message, "app-c: reconciler.yaml: fatal:") || !strings.Contains(r.Message, "boom") {
		t.Fatalf("second apply: %s %s %q", r.Revision, r.Status, r.Message)
	}
	if got := read(t, filepath.Join(root, "users", "app-a", "platform-config.sh")); got != "export LOG_LEVEL='debug'\n" {
		t.Fatalf("app-a's config %q, want the new one", got)
	}
	if exists(t, filepath.Join(root, "users", "app-b")) || exists(t, filepath.Join(root, "cron", "app-b")) {
		t.Fatal("app-b disappeared from the repository but its user folder or cron job is still there")
	}
	if exists(t, filepath.Join(root, "users", "elsewhere")) {
		t.Fatal("a target of another cluster type was applied")
	}

	// Nothing changed: app-a is not applied again (its removed cron job stays removed);
	// app-c, which failed, is tried again.
	if err := os.Remove(filepath.Join(root, "cron", "app-a")); err != nil {
		t.Fatal(err)
	}
	r, err = newAgent(false).Cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if exists(t, filepath.Join(root, "cron", "app-a")) {
		t.Fatal("app-a was applied again although nothing changed")
	}
	if got := statusOf(r); got["app-a"] != hub.Ready || got["app-c"] != hub.Failed {
		t.Fatalf("third cycle: %v", got)
	}
	for _, d := range r.Deployments {
		if d.DeploymentTarget == "app-c" && d.Revision != "" {
			t.Fatalf("app-c never applied, yet reports revision %q", d.Revision)
		}
	}
}

func TestAgentRefusesAMissingClusterTypeFolder(t *testing.T) {
	root := t.TempDir()
	repo := gittest.NewBare(t)
	repo.Commit(t, "dev", map[string]string{"vm-line/README.md": "x"})
	a, err := New(Options{Cluster: "c", Repo: repo.URL(), Branch: "dev", ClusterType: "vm-lnie", StateDir: root, Now: func() time.Time { return time.Unix(0, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Cycle(t.Context()); err == nil || !strings.Contains(err.Error(), "vm-lnie") {
		t.Fatalf("Cycle: %v, want an error naming the folder", err)
	}
	if _, err := New(Options{Cluster: "c", Repo: repo.URL(), Branch: "dev", ClusterType: "../x", StateDir: root}); err == nil {
		t.Fatal("New accepted a cluster type outside the repository")
	}
}

// TestAgentReportsWhatItsCleanupLeaves: when a target disappears, the tasks whose cleanup
// cannot be derived are named in the report's message and the log, and the rest of the
// cleanup runs. ansible-playbook is a stand-in that keeps the playbooks it is given.
func TestAgentReportsWhatItsCleanupLeaves(t *testing.T) {
	root := t.TempDir()
	ran := filepath.Join(root, "ran")
	fake := filepath.Join(root, "ansible-playbook")
	script := "#!/bin/sh\nfor last; do :; done\ncat \"$last\" >>'" + ran + "'\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil { //nolint:gosec // a script the test runs
		t.Fatal(err)
	}
	repo := gittest.NewBare(t)
	repo.Commit(t, "dev", tree(map[string]string{"app-a/reconciler.yaml": `- hosts: localhost
  tasks:
    - name: install the job
      ansible.builtin.file: {path: /srv/cron/app-a, state: touch}
    - ansible.builtin.stat: {path: /usr/sbin/nginx}
      register: nginx_bin
    - name: install nginx where it is missing
      ansible.builtin.apt: {name: nginx, state: present}
      when: not nginx_bin.stat.exists
`}))
	var log bytes.Buffer
	a, err := New(Options{Cluster: "line-7", Repo: repo.URL(), Branch: "dev", ClusterType: "vm-line",
		StateDir: filepath.Join(root, "state"), AnsiblePlaybook: fake, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := a.Cycle(t.Context()); err != nil || r.Status != hub.Compliant {
		t.Fatalf("apply: %+v %v", r, err)
	}
	if err := os.Remove(ran); err != nil {
		t.Fatal(err)
	}

	repo.Commit(t, "dev", tree())
	r, err := a.Cycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := `cleanup of app-a: reconciler.yaml: left in place: task "install nginx where it is missing": its when uses "nginx_bin", which another task sets as the playbook runs`
	if r.Message != want || r.Status != hub.Compliant {
		t.Errorf("report %s %q\nwant message %q", r.Status, r.Message, want)
	}
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), `install nginx where it is missing`) {
		t.Errorf("log:\n%s", log.String())
	}
	cleanup := read(t, ran)
	if !strings.Contains(cleanup, "remove: install the job") || strings.Contains(cleanup, "nginx") {
		t.Errorf("the cleanup that ran:\n%s", cleanup)
	}
	if exists(t, filepath.Join(root, "state", "applied", "app-a")) {
		t.Error("app-a's copy is kept although its cleanup ran")
	}
}

// TestPlaybooksDoNotSeeTheAgentsSecrets: a playbook (which comes from the GitOps repository)
// cannot read the agent's hub token or git and forge tokens from its environment, so it
// cannot put them into a failure the agent reports; other variables reach it.
// ansible-playbook is a stand-in that fails with what it inherited.
func TestPlaybooksDoNotSeeTheAgentsSecrets(t *testing.T) {
	t.Setenv("FLEETFORM_AGENT_TOKEN", "ff_s3cret_agent")
	t.Setenv("FLEETFORM_GIT_TOKEN", "s3cret_git")
	t.Setenv("GITHUB_TOKEN", "s3cret_forge")
	t.Setenv("OPERATOR_SETTING", "kept")
	root := t.TempDir()
	fake := filepath.Join(root, "ansible-playbook")
	script := "#!/bin/sh\necho \"fatal: [localhost]: FAILED! => {\\\"msg\\\": \\\"[$FLEETFORM_AGENT_TOKEN][$FLEETFORM_GIT_TOKEN][$GITHUB_TOKEN][$OPERATOR_SETTING]\\\"}\"\nexit 2\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil { //nolint:gosec // a script the test runs
		t.Fatal(err)
	}
	repo := gittest.NewBare(t)
	repo.Commit(t, "dev", tree(map[string]string{"app-a/reconciler.yaml": "- hosts: localhost\n  tasks: []\n"}))
	a, err := New(Options{Cluster: "line-7", Repo: repo.URL(), Branch: "dev", ClusterType: "vm-line",
		StateDir: filepath.Join(root, "state"), AnsiblePlaybook: fake})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Cycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Message, "s3cret") || !strings.Contains(r.Message, "[][][][kept]") {
		t.Errorf("the report's message: %q, want the playbook's failure without the agent's secrets", r.Message)
	}
}
