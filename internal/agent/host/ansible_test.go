package host

import (
	"slices"
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
	c, err := cleanupPlaybook([]byte(builtinReconciler))
	if err != nil || c.playbook == nil || c.left != nil {
		t.Fatalf("reconciler: %+v %v", c, err)
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
	if string(c.playbook) != want {
		t.Errorf("reconciler cleanup:\n%s\nwant:\n%s", c.playbook, want)
	}

	c, err = cleanupPlaybook([]byte(builtinNamespace))
	if err != nil || c.playbook == nil || c.left != nil {
		t.Fatalf("namespace: %+v %v", c, err)
	}
	s := string(c.playbook)
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
	c, err := cleanupPlaybook([]byte(`- hosts: localhost
  tasks:
    - file: {path: /tmp/a, state: directory}
    - file: {path: /tmp/a/b, state: touch}
      become: true
    - debug: {msg: hello}
`))
	if err != nil || c.playbook == nil {
		t.Fatalf("%+v %v", c, err)
	}
	s := string(c.playbook)
	if b, a := strings.Index(s, "/tmp/a/b"), strings.Index(s, "path: /tmp/a\n"); b < 0 || a < 0 || b > a || strings.Contains(s, "debug") || !strings.Contains(s, "become: true") || !strings.Contains(s, "name: 'remove: file'") {
		t.Errorf("want the tasks reversed, debug dropped, become kept:\n%s", s)
	}
	if c, err := cleanupPlaybook([]byte("- hosts: localhost\n  tasks:\n    - debug: {msg: hi}\n")); c.playbook != nil || c.left != nil || err != nil {
		t.Errorf("a playbook that creates nothing: %+v, err %v", c, err)
	}
	if _, err := cleanupPlaybook([]byte("hosts: localhost\n")); err == nil {
		t.Error("not a list of plays: no error")
	}
}

// TestCleanupKeepsConditionsLoopsAndDelegation: a cleanup task removes only what its task
// created, where and as it created it: it keeps when, loop, with_<lookup>, loop_control and
// delegate_to. A with_dict mapping written before the module is not taken for the module.
func TestCleanupKeepsConditionsLoopsAndDelegation(t *testing.T) {
	c, err := cleanupPlaybook([]byte(`- hosts: localhost
  vars: {want_nginx: false}
  tasks:
    - name: install nginx where it is wanted
      ansible.builtin.apt: {name: nginx, state: present}
      when: want_nginx | default(false)
    - name: users of a list
      ansible.builtin.user: {name: "{{ item }}", state: present}
      with_items: [alice, bob]
    - with_dict: {a: 1, b: 2}
      ansible.builtin.file: {path: "/srv/{{ item.key }}", state: directory}
    - name: packages
      ansible.builtin.package: {name: "{{ pkg }}", state: latest}
      loop: "{{ packages }}"
      loop_control: {loop_var: pkg}
      when: [pkg != "", ansible_os_family == "Debian"]
    - name: a record on the DNS server
      community.general.nsupdate: {server: ns1, zone: example.com, record: vm, value: 10.0.0.7, state: present}
      delegate_to: ns1.example.com
      become: true
`))
	if err != nil || c.left != nil {
		t.Fatalf("%+v %v", c, err)
	}
	want := `- hosts: localhost
  vars: {want_nginx: false}
  tasks:
    - name: 'remove: a record on the DNS server'
      community.general.nsupdate:
        server: ns1
        zone: example.com
        record: vm
        value: 10.0.0.7
        state: absent
      delegate_to: ns1.example.com
      become: true
    - name: 'remove: packages'
      ansible.builtin.package:
        name: "{{ pkg }}"
        state: absent
      loop: "{{ packages }}"
      loop_control: {loop_var: pkg}
      when: [pkg != "", ansible_os_family == "Debian"]
    - name: 'remove: ansible.builtin.file'
      ansible.builtin.file:
        path: "/srv/{{ item.key }}"
        state: absent
      with_dict: {a: 1, b: 2}
    - name: 'remove: users of a list'
      ansible.builtin.user:
        name: "{{ item }}"
        state: absent
      with_items: [alice, bob]
    - name: 'remove: install nginx where it is wanted'
      ansible.builtin.apt:
        name: nginx
        state: absent
      when: want_nginx | default(false)
`
	if string(c.playbook) != want {
		t.Errorf("cleanup:\n%s\nwant:\n%s", c.playbook, want)
	}
}

// TestCleanupLeavesTasksThatNeedRunTimeVariables: a task whose condition, loop or arguments
// use what another task registers, sets or gathers as the playbook runs has no cleanup
// (those tasks do not run in it: it would fail every time, or decide on something else);
// it is named with the reason, and the rest is still cleaned up.
func TestCleanupLeavesTasksThatNeedRunTimeVariables(t *testing.T) {
	c, err := cleanupPlaybook([]byte(`- hosts: localhost
  tasks:
    - ansible.builtin.stat: {path: /usr/sbin/nginx}
      register: nginx_bin
    - name: install nginx where it is missing
      ansible.builtin.apt: {name: nginx, state: present}
      when: not nginx_bin.stat.exists
    - ansible.builtin.set_fact: {wanted: [a, b]}
    - name: folders of a fact
      ansible.builtin.file: {path: "/srv/{{ item }}", state: directory}
      loop: "{{ wanted }}"
    - ansible.builtin.package_facts: {}
    - name: htop unless installed
      ansible.builtin.package: {name: htop, state: present}
      when: "'htop' not in ansible_facts.packages"
    - block:
        - ansible.builtin.tempfile: {state: directory}
          register: scratch
    - name: a link into a temporary folder
      ansible.builtin.file: {src: "{{ scratch.path }}", dest: /srv/scratch, state: link}
    - name: a folder whose path has a registered name in it, not a variable
      ansible.builtin.file: {path: /srv/nginx_bin/scratch.wanted, state: directory}
      when: ansible_check_mode or wanted_by_default | default(true)
`))
	if err != nil {
		t.Fatal(err)
	}
	wantLeft := []string{
		`task "install nginx where it is missing": its when uses "nginx_bin", which another task sets as the playbook runs`,
		`task "folders of a fact": its loop uses "wanted", which another task sets as the playbook runs`,
		`task "htop unless installed": its when uses "ansible_facts", which another task sets as the playbook runs`,
		`task "a link into a temporary folder": its arguments use "scratch", which another task sets as the playbook runs`,
	}
	if !slices.Equal(c.left, wantLeft) {
		t.Errorf("left:\n%s\nwant:\n%s", strings.Join(c.left, "\n"), strings.Join(wantLeft, "\n"))
	}
	s := string(c.playbook)
	if strings.Count(s, "- name:") != 1 || !strings.Contains(s, "path: /srv/nginx_bin/scratch.wanted") || !strings.Contains(s, "state: absent") {
		t.Errorf("want only the last folder removed:\n%s", s)
	}
}
