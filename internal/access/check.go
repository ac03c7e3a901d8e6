package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fleetform/fleetform/api/v1alpha1"
)

// Actions are every action a rule may allow, in the order the documentation gives them.
func Actions() []string {
	return []string{v1alpha1.ActionAuthor, v1alpha1.ActionPromote, v1alpha1.ActionApprove, v1alpha1.ActionOverride, v1alpha1.ActionTokens}
}

// Problem is what is wrong at a field path of an AccessPolicy, and how to fix it.
type Problem struct {
	Path, Message, Hint string
}

// Check lists what is wrong with an AccessPolicy. A policy with problems must not be used:
// the control plane leaves it out, so that a mistake never widens access.
func Check(ap *v1alpha1.AccessPolicy) []Problem {
	var out []Problem
	seen := map[string]int{}
	for i, r := range ap.Spec.Roles {
		at := fmt.Sprintf("spec.roles[%d]", i)
		switch first, dup := seen[r.Name]; {
		case r.Name == "":
			out = append(out, Problem{at + ".name", "a role needs a name", "the name is what decisions and the history show"})
		case dup:
			out = append(out, Problem{at + ".name", fmt.Sprintf("role %q is already defined at spec.roles[%d]", r.Name, first), "give each role a name of its own"})
		default:
			seen[r.Name] = i
		}
		out = append(out, checkSubjects(at, r.Subjects)...)
		if len(r.Allow) == 0 {
			out = append(out, Problem{at + ".allow", "a role needs at least one rule", "e.g. {action: promote, environments: [dev]}"})
		}
		for j, rule := range r.Allow {
			out = append(out, checkRule(fmt.Sprintf("%s.allow[%d]", at, j), rule)...)
		}
	}
	return out
}

func checkSubjects(at string, subjects []v1alpha1.AccessSubject) []Problem {
	if len(subjects) == 0 {
		return []Problem{{at + ".subjects", "a role needs at least one subject", "e.g. {group: platform-engineers}"}}
	}
	var out []Problem
	for j, s := range subjects {
		path := fmt.Sprintf("%s.subjects[%d]", at, j)
		set := 0
		for _, v := range []string{s.Group, s.User, s.Token} {
			if v != "" {
				set++
			}
		}
		if s.Claim != nil {
			set++
		}
		if set != 1 {
			out = append(out, Problem{path, "a subject needs exactly one of group, user, token and claim", "write one subject per line"})
			continue
		}
		if s.Claim != nil && len(s.Claim) == 0 {
			out = append(out, Problem{path + ".claim", "a claim subject needs at least one claim", "e.g. {repository: contoso/payments}"})
		}
		for _, k := range sortedClaimKeys(s.Claim) {
			if s.Claim[k] == "" {
				out = append(out, Problem{path + ".claim." + k, "a claim's value may not be empty", "give the value the token must carry"})
			}
		}
	}
	return out
}

// checkRule checks that a rule's scope is one its action takes.
func checkRule(at string, r v1alpha1.AccessRule) []Problem {
	var out []Problem
	add := func(field, msg, hint string) { out = append(out, Problem{at + field, msg, hint}) }
	switch r.Action {
	case v1alpha1.ActionAuthor:
		if len(r.Workspaces) == 0 && !r.Platform {
			add("", "author needs workspaces or platform: true", "e.g. {action: author, workspaces: [payments]}")
		}
		if len(r.Environments) > 0 {
			add(".environments", "author is not scoped by environment: changes reach environments by promotion", "scope promote by environments instead")
		}
	case v1alpha1.ActionPromote, v1alpha1.ActionApprove, v1alpha1.ActionOverride:
		if len(r.Environments) == 0 {
			add(".environments", r.Action+" needs environments", `list them, or ["*"] for every environment`)
		}
	case v1alpha1.ActionTokens:
		if len(r.Workspaces) > 0 || len(r.Environments) > 0 {
			add("", "tokens is not scoped by workspace or environment", "write {action: tokens}")
		}
	default:
		add(".action", fmt.Sprintf("unknown action %q", r.Action), "one of "+strings.Join(Actions(), ", "))
		return out
	}
	if r.Platform && r.Action != v1alpha1.ActionAuthor {
		add(".platform", "platform applies to author only", "remove it")
	}
	if slices.Contains(r.Workspaces, "") {
		add(".workspaces", "an empty workspace name", `name it, or write "*" for every workspace`)
	}
	if slices.Contains(r.Environments, "") {
		add(".environments", "an empty environment name", `name it, or write "*" for every environment`)
	}
	return out
}

func sortedClaimKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
