package render

import (
	"reflect"
	"sync"
)

// configMemo remembers the results of pure functions of a composed config (toYaml,
// stringify, invalidConfigMapKeys). Configs are shared by every assignment with the same
// sources and never modified, so each is processed once per render instead of once per
// assignment (100,000 assignments typically share a few hundred configs). Only maps
// registered with share are memoized: a map a template built or copied itself is processed
// every time, so a freed map's address can never be mistaken for a config.
type configMemo struct {
	shared sync.Map // map data pointer -> *memoEntry
}

type memoEntry struct {
	mu      sync.Mutex
	results map[string]any
}

// share registers a config's data; the caller keeps it alive and unchanged for the render.
func (m *configMemo) share(data map[string]any) {
	if data != nil {
		m.shared.LoadOrStore(reflect.ValueOf(data).UnsafePointer(), &memoEntry{results: map[string]any{}})
	}
}

// memoize returns fn memoized under name for registered configs. A call that panics (a
// limit) is not remembered.
func memoize[T any](m *configMemo, name string, fn func(any) T) func(any) T {
	return func(v any) T {
		data, ok := v.(map[string]any)
		if !ok || data == nil {
			return fn(v)
		}
		e, ok := m.shared.Load(reflect.ValueOf(data).UnsafePointer())
		if !ok {
			return fn(v)
		}
		entry := e.(*memoEntry)
		entry.mu.Lock()
		defer entry.mu.Unlock()
		if r, ok := entry.results[name]; ok {
			return r.(T)
		}
		r := fn(v)
		entry.results[name] = r
		return r
	}
}
