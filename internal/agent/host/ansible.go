package host

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/fleetform/fleetform/internal/yamlnode"
)

// ansible runs playbooks with ansible-playbook on this host.
type ansible struct {
	bin     string // ansible-playbook (a name in PATH or a path)
	home    string // ANSIBLE_HOME: Ansible's own files stay in the agent's state folder
	check   bool
	timeout time.Duration
}

// run runs a playbook from its own folder (so that {{ playbook_dir }} finds the files
// rendered next to it), on localhost with the local connection, in check mode when asked.
// It returns a one-line explanation with the error.
func (a ansible) run(ctx context.Context, playbook string) error {
	ctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	args := []string{"-i", "localhost,", "-c", "local"}
	if a.check {
		args = append(args, "--check")
	}
	cmd := exec.CommandContext(ctx, a.bin, append(args, filepath.Base(playbook))...) //nolint:gosec // a.bin is the operator's --ansible-playbook; the playbook is one the agent wrote
	cmd.Dir = filepath.Dir(playbook)
	cmd.Env = append(os.Environ(),
		"ANSIBLE_HOME="+a.home, "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0", "ANSIBLE_RETRY_FILES_ENABLED=0",
		"ANSIBLE_LOCALHOST_WARNING=0", "ANSIBLE_INVENTORY_UNPARSED_WARNING=0", "PYTHONUNBUFFERED=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", filepath.Base(playbook), ctx.Err())
		}
		return fmt.Errorf("%s: %s (%w)", filepath.Base(playbook), failureLine(out.String()), err)
	}
	return nil
}

// failureLine picks the line of ansible-playbook's output that says what failed.
func failureLine(out string) string {
	last := ""
	for line := range strings.Lines(out) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "fatal:") || strings.HasPrefix(line, "ERROR!") || strings.HasPrefix(line, "failed:") {
			return cut(line, 300)
		}
		if line != "" {
			last = line
		}
	}
	return cut(last, 300)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// creatingStates are the module states that make something exist; a cleanup playbook sets
// them to absent.
var creatingStates = []string{"present", "latest", "installed", "directory", "touch", "link", "hard", "mounted"}

// taskKeywords are the keys of a task that are not its module.
var taskKeywords = map[string]bool{
	"name": true, "register": true, "when": true, "loop": true, "loop_control": true, "notify": true,
	"tags": true, "become": true, "become_user": true, "become_method": true, "ignore_errors": true,
	"changed_when": true, "failed_when": true, "vars": true, "environment": true, "check_mode": true,
	"delegate_to": true, "no_log": true, "until": true, "retries": true, "delay": true, "args": true,
	"block": true, "rescue": true, "always": true, "listen": true, "run_once": true, "diff": true,
	"any_errors_fatal": true, "module_defaults": true, "throttle": true, "timeout": true, "action": true,
	"local_action": true,
}

// keptTaskKeys are the keys of a task a cleanup task keeps besides its module.
var keptTaskKeys = []string{"become", "become_user", "become_method", "loop", "loop_control", "vars", "environment"}

// cleanupPlaybook derives from a playbook the one that removes what it created: every task
// whose module arguments (a mapping) set a creating state (present, latest, installed,
// directory, touch, link, hard, mounted) runs again with state absent, in reverse order;
// every other task is dropped (it created nothing by itself, or only inside what is
// removed). It returns false when the playbook creates nothing that way. Tags such as
// !unsafe are kept.
func cleanupPlaybook(data []byte) ([]byte, bool, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, false, fmt.Errorf("parse the playbook: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, false, fmt.Errorf("parse the playbook: not a list of plays")
	}
	var plays []*yaml.Node
	for _, play := range doc.Content[0].Content {
		if p := cleanupPlay(play); p != nil {
			plays = append(plays, p)
		}
	}
	if len(plays) == 0 {
		return nil, false, nil
	}
	slices.Reverse(plays)
	out, err := yamlnode.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: plays})
	return out, true, err
}

func cleanupPlay(play *yaml.Node) *yaml.Node {
	if play.Kind != yaml.MappingNode {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	var tasks []*yaml.Node
	for i := 0; i+1 < len(play.Content); i += 2 {
		key, value := play.Content[i], play.Content[i+1]
		switch key.Value {
		case "pre_tasks", "tasks", "post_tasks":
			for _, task := range value.Content {
				if t := cleanupTask(task); t != nil {
					tasks = append(tasks, t)
				}
			}
		case "roles", "handlers":
		case "name":
			out.Content = append(out.Content, key, scalar("cleanup: "+value.Value))
		default:
			out.Content = append(out.Content, key, value)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	slices.Reverse(tasks)
	return &yaml.Node{Kind: yaml.MappingNode, Content: append(out.Content, scalar("tasks"), &yaml.Node{Kind: yaml.SequenceNode, Content: tasks})}
}

func cleanupTask(task *yaml.Node) *yaml.Node {
	if task.Kind != yaml.MappingNode {
		return nil
	}
	name, module, moduleArgs := "", (*yaml.Node)(nil), (*yaml.Node)(nil)
	kept := map[string]*yaml.Node{}
	for i := 0; i+1 < len(task.Content); i += 2 {
		key, value := task.Content[i], task.Content[i+1]
		switch {
		case key.Value == "name":
			name = value.Value
		case slices.Contains(keptTaskKeys, key.Value):
			kept[key.Value] = value
		case !taskKeywords[key.Value] && module == nil && value.Kind == yaml.MappingNode:
			module, moduleArgs = key, value
		}
	}
	if module == nil {
		return nil
	}
	args := &yaml.Node{Kind: yaml.MappingNode}
	creates := false
	for i := 0; i+1 < len(moduleArgs.Content); i += 2 {
		key, value := moduleArgs.Content[i], moduleArgs.Content[i+1]
		if key.Value == "state" && slices.Contains(creatingStates, value.Value) {
			creates = true
			value = scalar("absent")
		}
		args.Content = append(args.Content, key, value)
	}
	if !creates {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{scalar("name"), scalar("remove: " + cmp.Or(name, module.Value)), module, args}}
	for _, k := range keptTaskKeys {
		if v, ok := kept[k]; ok {
			out.Content = append(out.Content, scalar(k), v)
		}
	}
	return out
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
