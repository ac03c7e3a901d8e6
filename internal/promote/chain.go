// Package promote decides whether a control-plane commit may be promoted into an
// environment: the chain of environments, its gates (the source environment's fleet
// compliance, soak time, approval), freeze windows, and the pin it writes.
package promote

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// Gates are an environment's promotion requirements.
type Gates struct {
	// Environment is the environment being promoted into.
	Environment string
	// From is the source environment; "" for the first of a chain.
	From                string
	MinCompliantPercent int
	Soak                time.Duration
	Approval            bool
	// Approvals is how many approvals from distinct identities are needed (0 without
	// Approval); DistinctFromAuthor leaves out the author of the change promoted (four-eyes).
	Approvals          int
	DistinctFromAuthor bool
	Automatic          bool
	Freeze             []Window
}

// Chain is the environments and their gates, as declared at the tip.
type Chain struct {
	Gates map[string]Gates
	// Order lists the environments so that every source comes before what it feeds.
	Order []string
}

// NewChain reads the promotion settings of every environment and checks the chain: sources
// exist and there is no cycle.
func NewChain(envs []controlplane.EnvironmentInfo) (*Chain, []controlplane.Diagnostic) {
	c := &Chain{Gates: map[string]Gates{}}
	var diags []controlplane.Diagnostic
	for _, e := range envs {
		g, ds := gatesOf(e)
		diags = append(diags, ds...)
		c.Gates[e.Name] = g
	}
	for _, e := range envs {
		g := c.Gates[e.Name]
		if _, ok := c.Gates[g.From]; g.From != "" && !ok {
			diags = append(diags, e.Object.Source.Diag("spec.promotion.from",
				fmt.Sprintf("environment %q does not exist", g.From), "name an environment of this control plane"))
			g.From = ""
			c.Gates[e.Name] = g
		}
	}
	order, cycle := topoSort(c.Gates)
	if cycle != "" {
		for _, e := range envs {
			if e.Name == cycle && e.Object != nil {
				diags = append(diags, e.Object.Source.Diag("spec.promotion.from", "the promotion chain has a cycle through "+cycle, ""))
			}
		}
	}
	c.Order = order
	return c, diags
}

// Next returns the environments that take promotions from env, sorted.
func (c *Chain) Next(env string) []string {
	var out []string
	for name, g := range c.Gates {
		if g.From == env {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func gatesOf(e controlplane.EnvironmentInfo) (Gates, []controlplane.Diagnostic) {
	g := Gates{Environment: e.Name, MinCompliantPercent: 100}
	if e.Object == nil {
		return g, nil
	}
	var diags []controlplane.Diagnostic
	src := e.Object.Source
	if p := e.Object.Spec.Promotion; p != nil {
		g.From, g.Automatic = p.From, p.Automatic
		rule, ds := e.Object.ApprovalRule()
		diags = append(diags, ds...)
		g.Approval, g.Approvals, g.DistinctFromAuthor = rule.Count > 0, rule.Count, rule.DistinctFromAuthor
		if p.MinCompliantPercent != nil {
			g.MinCompliantPercent = *p.MinCompliantPercent
			if g.MinCompliantPercent < 0 || g.MinCompliantPercent > 100 {
				diags = append(diags, src.Diag("spec.promotion.minCompliantPercent", "must be between 0 and 100", ""))
				g.MinCompliantPercent = 100
			}
		}
		if p.Soak != "" {
			d, err := time.ParseDuration(p.Soak)
			if err != nil || d < 0 {
				diags = append(diags, src.Diag("spec.promotion.soak", fmt.Sprintf("%q is not a duration", p.Soak), "for example 30m or 24h"))
			} else {
				g.Soak = d
			}
		}
		if g.From == e.Name {
			diags = append(diags, src.Diag("spec.promotion.from", "an environment cannot promote from itself", ""))
			g.From = ""
		}
	}
	for i, w := range e.Object.Spec.FreezeWindows {
		win, err := parseWindow(w)
		if err != nil {
			diags = append(diags, src.Diag("spec.freezeWindows["+strconv.Itoa(i)+"]", err.Error(), ""))
			continue
		}
		g.Freeze = append(g.Freeze, win)
	}
	return g, diags
}

// topoSort orders the environments sources first; it returns the name of an environment on
// a cycle when there is one (those environments are left out).
func topoSort(gates map[string]Gates) ([]string, string) {
	names := make([]string, 0, len(gates))
	for n := range gates {
		names = append(names, n)
	}
	slices.Sort(names)
	state := map[string]int{} // 1 visiting, 2 done
	var order []string
	cycle := ""
	var visit func(n string) bool
	visit = func(n string) bool {
		switch state[n] {
		case 1:
			cycle = n
			return false
		case 2:
			return true
		}
		state[n] = 1
		if from := gates[n].From; from != "" && !visit(from) {
			return false
		}
		state[n] = 2
		order = append(order, n)
		return true
	}
	for _, n := range names {
		visit(n)
	}
	return order, cycle
}
