package authoring

import (
	"context"
	"fmt"
	"sync"

	"github.com/fleetform/fleetform/internal/controlplane"
)

// RenderCache remembers the input digests of the assignments that the last change
// validated rendered without error, before and after it, so that the next change renders
// only the assignments whose inputs are new (equal digests mean byte-identical files): a
// change made after another, on the commit it pushed, renders little more than what it
// changes. It holds about 50 bytes an assignment. The zero value is an empty cache; it is
// safe for concurrent use.
type RenderCache struct {
	mu    sync.Mutex
	clean map[string]bool // never modified once stored
}

// known returns the digests remembered (read only; nil for a nil cache).
func (c *RenderCache) known() map[string]bool {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clean
}

// remember replaces the digests remembered with clean, which is not modified afterwards.
func (c *RenderCache) remember(clean map[string]bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.clean = clean
}

// fleets is the control plane loaded before and after a change, with the diagnostics of
// its environments and chain.
type fleets struct {
	before, after           map[string]*fleet
	beforeDiags, afterDiags []controlplane.Diagnostic
}

// loadBoth loads the control plane before and after a change. An assignment is rendered
// only when its inputs are neither in cache nor rendered without error before the change;
// cache then remembers what rendered without error on either side.
func loadBoth(ctx context.Context, before, after *controlplane.ControlPlane, cache *RenderCache) (*fleets, error) {
	known := cache.known()
	clean := map[string]bool{}
	var fs fleets
	var err error
	fs.before, fs.beforeDiags, err = loadFleet(ctx, before, func(d string) bool { return known[d] })
	if err != nil {
		return nil, err
	}
	cleanOf(clean, fs.before)
	fs.after, fs.afterDiags, err = loadFleet(ctx, after, func(d string) bool { return clean[d] || known[d] })
	if err != nil {
		return nil, fmt.Errorf("load the changed control plane: %w", err)
	}
	next := map[string]bool{}
	cleanOf(next, fs.before)
	cleanOf(next, fs.after)
	cache.remember(next)
	return &fs, nil
}

// cleanOf adds the input digests that rendered, or are known to render, without error in
// the environments of fs.
func cleanOf(set map[string]bool, fs map[string]*fleet) {
	for _, f := range fs {
		if r := runOf(f); r != nil {
			r.AddRendered(set)
		}
	}
}
