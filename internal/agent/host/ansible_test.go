package host

import (
	"strings"
	"testing"
)

// The playbooks builtin/ansible and builtin/ansible-user render for the example's
// plc-gateway-bench target on vm-line (dev).
const (
	builtinReconciler = `- name: "fleetform reconciler of plc-gateway-bench on vm-line (dev)"
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: install the ansible-pull cron job
      ansible.builtin.cron:
        name: "plc-gateway-bench"
        user: "dev-plc-gateway-bench"
        minute: !unsafe "*/1"
        job: !unsafe "flock -n \"$HOME/.ansible-pull.lock\" ansible-pull --only-if-changed --url 'https://github.com/example-org/plc-gateway-deploy' --checkout 'dev' 'site.yml' >>\"$HOME/ansible-pull.log\" 2>&1"
        state: present
`
	builtinNamespace = `- name: "fleetform namespace of plc-gateway-bench on vm-line (dev)"
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: create the OS user
      ansible.builtin.user:
        name: "dev-plc-gateway-bench"
        comment: "fleetform dev/vm-line/plc-gateway-bench"
        create_home: true
        state: present
      register: fleetform_user
    - name: look for platform-config.sh next to this playbook
      ansible.builtin.stat:
        path: "{{ playbook_dir }}/platform-config.sh"
      register: fleetform_config
    - name: copy platform-config.sh into the user's home
      ansible.builtin.copy:
        src: "{{ playbook_dir }}/platform-config.sh"
        dest: "{{ fleetform_user.home }}/platform-config.sh"
        owner: "dev-plc-gateway-bench"
        group: "dev-plc-gateway-bench"
        mode: "0600"
      when: fleetform_config.stat.exists
`
)

func TestCleanupOfTheBuiltinPlaybooks(t *testing.T) {
	out, ok, err := cleanupPlaybook([]byte(builtinReconciler))
	if err != nil || !ok {
		t.Fatalf("reconciler: %v %v", ok, err)
	}
	want := `- name: 'cleanup: fleetform reconciler of plc-gateway-bench on vm-line (dev)'
  hosts: localhost
  connection: local
  gather_facts: false
  tasks:
    - name: 'remove: install the ansible-pull cron job'
      ansible.builtin.cron:
        name: "plc-gateway-bench"
        user: "dev-plc-gateway-bench"
        minute: !unsafe "*/1"
        job: !unsafe "flock -n \"$HOME/.ansible-pull.lock\" ansible-pull --only-if-changed --url 'https://github.com/example-org/plc-gateway-deploy' --checkout 'dev' 'site.yml' >>\"$HOME/ansible-pull.log\" 2>&1"
        state: absent
`
	if string(out) != want {
		t.Errorf("reconciler cleanup:\n%s\nwant:\n%s", out, want)
	}

	out, ok, err = cleanupPlaybook([]byte(builtinNamespace))
	if err != nil || !ok {
		t.Fatalf("namespace: %v %v", ok, err)
	}
	s := string(out)
	for _, part := range []string{"ansible.builtin.user:", `name: "dev-plc-gateway-bench"`, "state: absent"} {
		if !strings.Contains(s, part) {
			t.Errorf("namespace cleanup lacks %q:\n%s", part, s)
		}
	}
	for _, gone := range []string{"stat:", "copy:", "register:", "when:"} {
		if strings.Contains(s, gone) {
			t.Errorf("namespace cleanup keeps %q:\n%s", gone, s)
		}
	}
}

func TestCleanupOrderAndNothingToUndo(t *testing.T) {
	out, ok, err := cleanupPlaybook([]byte(`- hosts: localhost
  tasks:
    - file: {path: /tmp/a, state: directory}
    - file: {path: /tmp/a/b, state: touch}
      become: true
    - debug: {msg: hello}
`))
	if err != nil || !ok {
		t.Fatalf("%v %v", ok, err)
	}
	s := string(out)
	if b, a := strings.Index(s, "/tmp/a/b"), strings.Index(s, "path: /tmp/a\n"); b < 0 || a < 0 || b > a || strings.Contains(s, "debug") || !strings.Contains(s, "become: true") || !strings.Contains(s, "name: 'remove: file'") {
		t.Errorf("want the tasks reversed, debug dropped, become kept:\n%s", s)
	}
	if _, ok, err := cleanupPlaybook([]byte("- hosts: localhost\n  tasks:\n    - debug: {msg: hi}\n")); ok || err != nil {
		t.Errorf("a playbook that creates nothing: ok %v, err %v", ok, err)
	}
	if _, _, err := cleanupPlaybook([]byte("hosts: localhost\n")); err == nil {
		t.Error("not a list of plays: no error")
	}
}
