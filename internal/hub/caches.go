package hub

import (
	"hash/maphash"
	"sync"
)

// cacheShards is how many maps a shardedMap spreads its entries over (lock contention).
const cacheShards = 64

// shardedMap is a concurrent map for the hub's per-cluster caches (token lookups, cluster
// environments): a plain map per shard behind a read-write lock. With a million clusters,
// sync.Map made several small objects per entry (a node, the key, the boxed value) for the
// garbage collector to trace on every cycle; here an entry lives inside its shard's table.
type shardedMap[K comparable, V any] struct {
	seed   maphash.Seed
	shards [cacheShards]struct {
		mu sync.RWMutex
		m  map[K]V
	}
}

func newShardedMap[K comparable, V any]() *shardedMap[K, V] {
	return &shardedMap[K, V]{seed: maphash.MakeSeed()}
}

func (s *shardedMap[K, V]) shard(k K) int {
	return int(maphash.Comparable(s.seed, k) % cacheShards)
}

// Load returns the value of k.
func (s *shardedMap[K, V]) Load(k K) (V, bool) {
	sh := &s.shards[s.shard(k)]
	sh.mu.RLock()
	v, ok := sh.m[k]
	sh.mu.RUnlock()
	return v, ok
}

// Store sets the value of k.
func (s *shardedMap[K, V]) Store(k K, v V) {
	sh := &s.shards[s.shard(k)]
	sh.mu.Lock()
	if sh.m == nil {
		sh.m = map[K]V{}
	}
	sh.m[k] = v
	sh.mu.Unlock()
}

// Delete removes k.
func (s *shardedMap[K, V]) Delete(k K) {
	sh := &s.shards[s.shard(k)]
	sh.mu.Lock()
	delete(sh.m, k)
	sh.mu.Unlock()
}

// tokenKey is a token hash as a map key (SHA-256: see HashToken).
type tokenKey [32]byte
