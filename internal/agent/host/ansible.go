package host

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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
	cmd.Env = childEnv(
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

// taskKeywords are the keys of a task that are not its module (with_<lookup> aside: see
// isTaskKeyword).
var taskKeywords = map[string]bool{
	"name": true, "register": true, "when": true, "loop": true, "loop_control": true, "notify": true,
	"tags": true, "become": true, "become_user": true, "become_method": true, "ignore_errors": true,
	"changed_when": true, "failed_when": true, "vars": true, "environment": true, "check_mode": true,
	"delegate_to": true, "no_log": true, "until": true, "retries": true, "delay": true, "args": true,
	"block": true, "rescue": true, "always": true, "listen": true, "run_once": true, "diff": true,
	"any_errors_fatal": true, "module_defaults": true, "throttle": true, "timeout": true, "action": true,
	"local_action": true, "delegate_facts": true, "remote_user": true, "connection": true, "port": true,
}

func isTaskKeyword(key string) bool { return taskKeywords[key] || strings.HasPrefix(key, "with_") }

// isKeptTaskKey says which keys of a task its cleanup keeps besides its module: how it runs
// (privileges, variables, environment), on which host (delegate_to, and how that host is
// reached), whether it runs (when) and for which items (loop, loop_control, with_<lookup>),
// so that it removes what the task created, where and as it created it, and only if the
// task ran.
func isKeptTaskKey(key string) bool {
	switch key {
	case "become", "become_user", "become_method", "vars", "environment",
		"delegate_to", "remote_user", "connection", "port", "when", "loop", "loop_control":
		return true
	}
	return strings.HasPrefix(key, "with_")
}

// cleanup is what cleanupPlaybook derives from a playbook.
type cleanup struct {
	// playbook removes what the playbook created; nil when it creates nothing it can remove.
	playbook []byte
	// left names the tasks that create something the cleanup leaves in place, and why.
	left []string
}

// cleanupPlaybook derives from a playbook the one that removes what it created: every task
// whose module arguments (a mapping) set a creating state (present, latest, installed,
// directory, touch, link, hard, mounted) runs again with state absent, in reverse order,
// with its when, loop, with_<lookup>, loop_control and delegate_to (see isKeptTaskKey);
// every other task is dropped (it created nothing by itself, or only inside what is
// removed). A creating task whose arguments or kept keys refer to a variable that a task of
// the play sets as it runs (register, set_fact, a facts module) is left out and named in
// cleanup.left: that task does not run in the cleanup, so the variable would be undefined
// (a cleanup that fails every time) or tell something else than when the playbook ran.
// Tags such as !unsafe are kept.
func cleanupPlaybook(data []byte) (cleanup, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cleanup{}, fmt.Errorf("parse the playbook: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode {
		return cleanup{}, fmt.Errorf("parse the playbook: not a list of plays")
	}
	var out cleanup
	var plays []*yaml.Node
	for _, play := range doc.Content[0].Content {
		if p := cleanupPlay(play, &out.left); p != nil {
			plays = append(plays, p)
		}
	}
	if len(plays) == 0 {
		return out, nil
	}
	slices.Reverse(plays)
	var err error
	out.playbook, err = yamlnode.Encode(&yaml.Node{Kind: yaml.SequenceNode, Content: plays})
	return out, err
}

func cleanupPlay(play *yaml.Node, left *[]string) *yaml.Node {
	if play.Kind != yaml.MappingNode {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode}
	setAtRunTime := runTimeVariables(play)
	var tasks []*yaml.Node
	for i := 0; i+1 < len(play.Content); i += 2 {
		key, value := play.Content[i], play.Content[i+1]
		switch key.Value {
		case "pre_tasks", "tasks", "post_tasks":
			for _, task := range value.Content {
				t, why := cleanupTask(task, setAtRunTime)
				if t != nil {
					tasks = append(tasks, t)
				} else if why != "" {
					*left = append(*left, why)
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

// cleanupTask returns the task that undoes task, or nil: with why set when task creates
// something the cleanup leaves in place.
func cleanupTask(task *yaml.Node, setAtRunTime map[string]bool) (t *yaml.Node, why string) {
	if task.Kind != yaml.MappingNode {
		return nil, ""
	}
	name, module, moduleArgs := "", (*yaml.Node)(nil), (*yaml.Node)(nil)
	var kept []*yaml.Node // keys and values
	for i := 0; i+1 < len(task.Content); i += 2 {
		key, value := task.Content[i], task.Content[i+1]
		switch {
		case key.Value == "name":
			name = value.Value
		case isKeptTaskKey(key.Value):
			kept = append(kept, key, value)
		case !isTaskKeyword(key.Value) && module == nil && value.Kind == yaml.MappingNode:
			module, moduleArgs = key, value
		}
	}
	if module == nil {
		return nil, ""
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
		return nil, ""
	}
	label := cmp.Or(name, module.Value)
	for i := 0; i+1 < len(kept); i += 2 {
		if v := referenceIn(kept[i+1], isExpression(kept[i].Value, kept[i+1]), setAtRunTime); v != "" {
			return nil, fmt.Sprintf("task %q: its %s uses %s, which another task sets as the playbook runs", label, kept[i].Value, v)
		}
	}
	if v := referenceIn(moduleArgs, false, setAtRunTime); v != "" {
		return nil, fmt.Sprintf("task %q: its arguments use %s, which another task sets as the playbook runs", label, v)
	}
	content := append([]*yaml.Node{scalar("name"), scalar("remove: " + label), module, args}, kept...)
	return &yaml.Node{Kind: yaml.MappingNode, Content: content}, ""
}

// isExpression says whether a task key's value is a Jinja expression as a whole: a when
// condition, or a loop written as a bare variable name.
func isExpression(key string, value *yaml.Node) bool {
	loop := key == "loop" || strings.HasPrefix(key, "with_")
	return key == "when" || loop && value.Kind == yaml.ScalarNode && !strings.Contains(value.Value, "{{")
}

// runTimeVariables are the variables the tasks of a play (in blocks too, handlers
// included) set as they run: those they register, those set_fact sets, and ansible_facts
// when a task gathers facts (setup, gather_facts, a <name>_facts module).
func runTimeVariables(play *yaml.Node) map[string]bool {
	vars := map[string]bool{}
	var walk func(tasks *yaml.Node)
	walk = func(tasks *yaml.Node) {
		if tasks.Kind != yaml.SequenceNode {
			return
		}
		for _, task := range tasks.Content {
			if task.Kind != yaml.MappingNode {
				continue
			}
			for i := 0; i+1 < len(task.Content); i += 2 {
				key, value := task.Content[i].Value, task.Content[i+1]
				module := key[strings.LastIndex(key, ".")+1:] // ansible.builtin.set_fact: set_fact
				switch {
				case key == "block" || key == "rescue" || key == "always":
					walk(value)
				case key == "register" && value.Kind == yaml.ScalarNode:
					vars[value.Value] = true
				case isTaskKeyword(key):
				case module == "set_fact":
					setFactNames(value, vars)
				case module == "setup" || module == "gather_facts" || strings.HasSuffix(module, "_facts"):
					vars["ansible_facts"] = true
				}
			}
		}
	}
	for i := 0; i+1 < len(play.Content); i += 2 {
		switch play.Content[i].Value {
		case "pre_tasks", "tasks", "post_tasks", "handlers":
			walk(play.Content[i+1])
		}
	}
	return vars
}

// setFactNames adds the variables set_fact arguments (a mapping, or key=value words) set.
func setFactNames(args *yaml.Node, vars map[string]bool) {
	switch args.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(args.Content); i += 2 {
			if k := args.Content[i].Value; k != "cacheable" {
				vars[k] = true
			}
		}
	case yaml.ScalarNode:
		for word := range strings.FieldsSeq(args.Value) {
			if k, _, ok := strings.Cut(word, "="); ok && k != "cacheable" {
				vars[k] = true
			}
		}
	}
}

var (
	// jinjaRE finds the expressions and statements of a templated string.
	jinjaRE = regexp.MustCompile(`(?s)\{\{.*?\}\}|\{%.*?%\}`)
	// identifierRE finds the names an expression uses: an identifier not after a dot (an
	// attribute) or inside a word.
	identifierRE = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])([A-Za-z_][A-Za-z0-9_]*)`)
)

// referenceIn returns the first variable of vars that a value (a scalar, or the scalars of
// a list or mapping) uses, quoted, or "". A when condition is an expression as a whole, as
// is a loop or with_<lookup> written as a bare variable name; elsewhere only what is
// between {{ }} or {% %} is.
func referenceIn(n *yaml.Node, expression bool, vars map[string]bool) string {
	if len(vars) == 0 {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		parts := []string{n.Value}
		if !expression {
			parts = jinjaRE.FindAllString(n.Value, -1)
		}
		for _, p := range parts {
			for _, m := range identifierRE.FindAllStringSubmatch(p, -1) {
				if vars[m[1]] {
					return strconv.Quote(m[1])
				}
			}
		}
	case yaml.SequenceNode, yaml.MappingNode:
		for _, c := range n.Content {
			if v := referenceIn(c, expression, vars); v != "" {
				return v
			}
		}
	case yaml.AliasNode:
		return referenceIn(n.Alias, expression, vars)
	}
	return ""
}

func scalar(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }
