package ui

import "testing"

// TestChainDepth: an environment's place in the chain follows the declared from links,
// whatever order the environments are listed in: a chain, rings fed by one environment, a
// link to an unknown environment and a cycle.
func TestChainDepth(t *testing.T) {
	for name, c := range map[string]struct {
		from map[string]string
		want map[string]int
	}{
		"chain listed by name": {map[string]string{"dev": "", "prod": "stage", "stage": "dev"}, map[string]int{"dev": 0, "stage": 1, "prod": 2}},
		"rings": {map[string]string{"dev": "", "ring-a": "dev", "ring-b": "dev", "prod": "ring-a"},
			map[string]int{"dev": 0, "ring-a": 1, "ring-b": 1, "prod": 2}},
		"unknown source": {map[string]string{"dev": "", "stage": "qa"}, map[string]int{"dev": 0, "stage": 0}},
		"cycle":          {map[string]string{"a": "b", "b": "a"}, map[string]int{"a": 1, "b": 1}},
	} {
		for env, want := range c.want {
			if got := chainDepth(env, c.from); got != want {
				t.Errorf("%s: %s at depth %d, want %d", name, env, got, want)
			}
		}
	}
}
