package hub

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultStaleAfter   = 10 * time.Minute
	DefaultRetention    = 90 * 24 * time.Hour
	DefaultMaxBatch     = 512
	DefaultMaxClockSkew = 5 * time.Minute
)

// Options configure a Hub.
type Options struct {
	// StaleAfter: a cluster whose latest report is older counts as unknown.
	StaleAfter time.Duration
	// Retention: history events and superseded desired states older than this are pruned.
	Retention time.Duration
	// TokenCacheTTL bounds how long a token lookup is kept in memory (default
	// DefaultTokenCacheTTL; negative: not at all), and so how long a token revoked through
	// another replica still works on this one.
	TokenCacheTTL time.Duration
	// MaxClockSkew is how far ahead of the hub's clock a report's observedAt (or a recorded
	// event's time) may be (default DefaultMaxClockSkew); later ones are rejected.
	MaxClockSkew time.Duration
	// Writers is the number of concurrent ingest transactions (1 for SQLite).
	Writers int
	// MaxBatch bounds the reports committed in one transaction.
	MaxBatch int
	// SweepEvery is how often stale clusters are expired in the background (default 5s);
	// negative: never (tests with a fake clock call ExpireStale themselves).
	SweepEvery time.Duration
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
	// Observer is told about ingest results (metrics); nil ignores them.
	Observer Observer
	// People, when set, checks bearer JWTs from trusted identity providers (people and CI
	// jobs); without it only hub tokens authenticate.
	People PeopleVerifier
}

// Observer receives ingest events, for metrics.
type Observer interface {
	// Reported is called once per report with its result: accepted, unchanged, ignored
	// (out of order) or rejected.
	Reported(result string)
	// Committed is called once per ingest transaction.
	Committed(reports int, took time.Duration, err error)
}

// Hub is the observability hub's service.
type Hub struct {
	store Store
	opts  Options
	jobs  chan *job

	mu      sync.Mutex
	desired map[string]*desiredIndex // env\x00revision -> index (desired states never change)
	tokens  *shardedMap[tokenKey, cachedPrincipal]
	// clusters caches what ingest remembers of each cluster it saw: its environment (it never
	// changes: rotating a token cannot move a cluster), so that ingest knows which
	// environments to lock, and a hint of its latest report.
	clusters *shardedMap[string, clusterFacts]
	seed     maphash.Seed // of the digest hints
}

// clusterFacts is what ingest remembers of a cluster between transactions.
type clusterFacts struct {
	env string
	// digest is a hash of the digest of the cluster's latest report this hub committed (0:
	// none yet), to tell a heartbeat from a change before reading the cluster. It is a hint:
	// another replica may have stored a newer report since.
	digest uint64
}

// New returns a Hub on store. Call Run to start ingesting and sweeping.
func New(store Store, opts Options) *Hub {
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.TokenCacheTTL == 0 {
		opts.TokenCacheTTL = DefaultTokenCacheTTL
	}
	if opts.MaxClockSkew <= 0 {
		opts.MaxClockSkew = DefaultMaxClockSkew
	}
	if opts.Writers <= 0 {
		opts.Writers = 1
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SweepEvery == 0 {
		opts.SweepEvery = defaultSweepEvery
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Hub{store: store, opts: opts, jobs: make(chan *job, 4*opts.MaxBatch), desired: map[string]*desiredIndex{},
		tokens: newShardedMap[tokenKey, cachedPrincipal](), clusters: newShardedMap[string, clusterFacts](), seed: maphash.MakeSeed()}
}

// RegisterCluster registers a cluster and returns its new token. An existing name is a
// conflict unless rotate is set: then the cluster keeps its state and gets a new token (the
// old one stops working).
func (h *Hub) RegisterCluster(ctx context.Context, c Cluster, rotate bool) (string, error) {
	tokens, err := h.RegisterClusters(ctx, []Cluster{c}, rotate)
	if err != nil {
		return "", err
	}
	return tokens[0], nil
}

// RegisterClusters registers clusters in one transaction (a fleet simulator, an import)
// and returns their new tokens in order, as RegisterCluster does for one. Any conflict
// fails the whole batch: nothing is registered.
func (h *Hub) RegisterClusters(ctx context.Context, cs []Cluster, rotate bool) ([]string, error) {
	rs := make([]Registration, len(cs))
	for i, c := range cs {
		rs[i] = Registration{Cluster: c}
	}
	return h.Register(ctx, rs, rotate)
}

// Registration is a cluster to register, with the expiry of its token.
type Registration struct {
	Cluster
	// TokenExpiresAt is when the cluster's new token stops working (zero: never).
	TokenExpiresAt time.Time
}

// Register is RegisterClusters with an expiry for each token.
func (h *Hub) Register(ctx context.Context, rs []Registration, rotate bool) ([]string, error) {
	tokens := make([]string, len(rs))
	records := make([]Token, len(rs))
	now := h.opts.Now()
	for i, r := range rs {
		if err := validateCluster(r.Cluster); err != nil {
			return nil, err
		}
		if err := checkExpiry(r.TokenExpiresAt, now); err != nil {
			return nil, err
		}
		tok, err := NewToken()
		if err != nil {
			return nil, err
		}
		tokens[i] = tok
		records[i] = Token{Hash: HashToken(tok), Kind: TokenCluster, Cluster: r.Name, CreatedAt: now, ExpiresAt: r.TokenExpiresAt}
	}
	var replaced []Token
	err := h.store.Update(ctx, func(tx Tx) (err error) {
		replaced, err = h.registerAll(ctx, tx, rs, records, rotate)
		return err
	})
	if err != nil {
		return nil, err
	}
	h.forgetTokens(replaced)
	return tokens, nil
}

// registerAll registers rs (with their tokens) inside a transaction, or rotates the tokens
// of those already registered, and returns the tokens replaced. The clusters are locked at
// once, and the new ones inserted, given their tokens, counted and recorded in one statement
// each, so that a batch costs a few statements, not five per cluster. A batch that names a
// cluster twice is registered one cluster at a time, as the names come.
func (h *Hub) registerAll(ctx context.Context, tx Tx, rs []Registration, tokens []Token, rotate bool) ([]Token, error) {
	var replaced []Token
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	slices.Sort(names)
	if len(slices.Compact(slices.Clone(names))) != len(names) {
		for i, r := range rs {
			old, err := h.register(ctx, tx, r.Cluster, tokens[i], rotate)
			if err != nil {
				return nil, err
			}
			if old != nil {
				replaced = append(replaced, Token{Hash: old})
			}
		}
		return replaced, nil
	}
	locked, err := tx.LockClusters(ctx, names)
	if err != nil {
		return nil, err
	}
	existing := make(map[string]ClusterRecord, len(locked))
	for _, c := range locked {
		existing[c.Name] = c
	}
	var (
		fresh  []ClusterRecord
		issued []Token
	)
	for i, r := range rs {
		if c, ok := existing[r.Name]; ok {
			old, err := h.rotate(ctx, tx, c, r.Cluster, tokens[i], rotate)
			if err != nil {
				return nil, err
			}
			if old != nil {
				replaced = append(replaced, Token{Hash: old})
			}
			continue
		}
		c := r.Cluster
		c.RegisteredAt = tokens[i].CreatedAt
		fresh = append(fresh, ClusterRecord{Cluster: c, TokenHash: tokens[i].Hash})
		issued = append(issued, tokens[i])
	}
	return replaced, h.insertRegistered(ctx, tx, fresh, issued)
}

// insertRegistered inserts new clusters with their tokens, adds them to the counters (in a
// fixed order: the order in which writers lock counter rows) and records their registration
// events, one statement each.
func (h *Hub) insertRegistered(ctx context.Context, tx Tx, cs []ClusterRecord, tokens []Token) error {
	if len(cs) == 0 {
		return nil
	}
	if err := tx.InsertClusters(ctx, cs...); err != nil {
		return err
	}
	if err := tx.PutTokens(ctx, tokens...); err != nil {
		return err
	}
	added := map[ClusterCount]int{} // by environment and cluster type
	events := make([]Event, len(cs))
	for i, c := range cs {
		added[ClusterCount{Environment: c.Environment, ClusterType: c.ClusterType, Revision: RegisteredRevision}]++
		events[i] = registered(c.Cluster, c.RegisteredAt)
	}
	counts := make([]ClusterCount, 0, len(added))
	for k, n := range added {
		k.Count = n
		counts = append(counts, k)
	}
	slices.SortFunc(counts, func(a, b ClusterCount) int {
		return cmp.Or(strings.Compare(a.Environment, b.Environment), strings.Compare(a.ClusterType, b.ClusterType))
	})
	if err := tx.AddCounts(ctx, nil, counts); err != nil {
		return err
	}
	return tx.AddEvents(ctx, events)
}

func registered(c Cluster, at time.Time) Event {
	return Event{Time: at, Kind: EventRegistration, Environment: c.Environment, ClusterType: c.ClusterType, Cluster: c.Name, Message: "registered"}
}

// register registers one cluster inside a transaction, or rotates its token: then it
// returns the hash of the token replaced (the cluster's only one: registering deletes the
// others), for the caller to forget once committed.
func (h *Hub) register(ctx context.Context, tx Tx, c Cluster, token Token, rotate bool) (replaced []byte, err error) {
	existing, err := tx.LockCluster(ctx, c.Name)
	switch {
	case errors.Is(err, ErrNotFound):
		return nil, h.insertCluster(ctx, tx, c, token)
	case err != nil:
		return nil, err
	}
	return h.rotate(ctx, tx, existing, c, token, rotate)
}

// rotate gives a registered cluster (locked) a new token and returns the hash of the one
// replaced; without rotate, it refuses.
func (h *Hub) rotate(ctx context.Context, tx Tx, existing ClusterRecord, c Cluster, token Token, rotate bool) (replaced []byte, err error) {
	switch {
	case !rotate:
		return nil, Errorf(CodeConflict, "cluster %q is already registered (use ?rotate=true to issue a new token)", c.Name)
	case existing.Environment != c.Environment || existing.ClusterType != c.ClusterType:
		return nil, Errorf(CodeConflict, "cluster %q is registered in %s/%s; rotating its token cannot move it",
			c.Name, existing.Environment, existing.ClusterType)
	}
	replaced = existing.TokenHash
	existing.TokenHash, existing.Labels = token.Hash, c.Labels
	if err := tx.DeleteClusterTokens(ctx, c.Name); err != nil {
		return nil, err
	}
	if err := tx.UpdateCluster(ctx, existing); err != nil {
		return nil, err
	}
	return replaced, tx.PutTokens(ctx, token)
}

func (h *Hub) insertCluster(ctx context.Context, tx Tx, c Cluster, token Token) error {
	c.RegisteredAt = token.CreatedAt
	return h.insertRegistered(ctx, tx, []ClusterRecord{{Cluster: c, TokenHash: token.Hash}}, []Token{token})
}

func validateCluster(c Cluster) error {
	switch {
	case !validName(c.Name):
		return Errorf(CodeInvalid, "name %q: use 1 to 253 lowercase letters, digits, '-' and '.'", c.Name)
	case !validName(c.Environment):
		return Errorf(CodeInvalid, "environment %q is not a valid name", c.Environment)
	case !validName(c.ClusterType):
		return Errorf(CodeInvalid, "clusterType %q is not a valid name", c.ClusterType)
	}
	return nil
}

func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' && r != '.' {
			return false
		}
	}
	return true
}

// PostDesired records what fleetform scheduled for an environment at a GitOps revision. A
// revision's desired state never changes: posting it again with the same assignments is a
// no-op, with other assignments a conflict.
func (h *Hub) PostDesired(ctx context.Context, d Desired) error {
	if err := validateDesired(d); err != nil {
		return err
	}
	d.PostedAt = h.opts.Now()
	return h.store.Update(ctx, func(tx Tx) error {
		if err := tx.LockEnvironment(ctx, d.Environment, true); err != nil {
			return err
		}
		old, err := tx.Desired(ctx, d.Environment, d.Revision)
		switch {
		case err == nil && sameAssignments(old.Assignments, d.Assignments):
			return nil
		case err == nil:
			return Errorf(CodeConflict, "revision %s of %s was already posted with other assignments", d.Revision, d.Environment)
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if err := tx.PutDesired(ctx, d); err != nil {
			return err
		}
		if err := h.rebuildTargets(ctx, tx, d); err != nil {
			return err
		}
		return tx.AddEvents(ctx, []Event{{Time: d.PostedAt, Kind: EventDesired, Environment: d.Environment,
			Revision: d.Revision, Message: fmt.Sprintf("%d assignment(s) scheduled", len(d.Assignments))}})
	})
}

// rebuildTargets recounts the targets of a new desired revision from the clusters already
// at it (they may have reported it before fleetform posted it).
func (h *Hub) rebuildTargets(ctx context.Context, tx Tx, d Desired) error {
	if err := tx.DeleteTargetCounts(ctx, d.Environment, d.Revision); err != nil {
		return err
	}
	idx := indexDesired(d)
	clusters, err := tx.Clusters(ctx, d.Environment)
	if err != nil {
		return err
	}
	var add []TargetCount
	for _, c := range clusters {
		if !c.Reported || !c.Fresh || c.Revision != d.Revision {
			continue
		}
		deps, err := tx.Deployments(ctx, c.Name)
		if err != nil {
			return err
		}
		tc, _ := deltas(nil, contributionOf(c, deps, idx.targets(c.ClusterType)))
		add = append(add, tc...)
	}
	return tx.AddCounts(ctx, mergeTargetCounts(add), nil)
}

func validateDesired(d Desired) error {
	if !validName(d.Environment) || d.Revision == "" {
		return Errorf(CodeInvalid, "environment and revision are required")
	}
	seen := map[string]bool{}
	for i, a := range d.Assignments {
		if a.DeploymentTarget == "" || a.ClusterType == "" {
			return Errorf(CodeInvalid, "assignments[%d]: deploymentTarget and clusterType are required", i)
		}
		key := a.ClusterType + "/" + a.DeploymentTarget
		if seen[key] {
			return Errorf(CodeInvalid, "assignments[%d]: %s is listed twice", i, key)
		}
		seen[key] = true
	}
	return nil
}

// PostWorkloadVersion records the version application CI deployed to a deployment target.
func (h *Hub) PostWorkloadVersion(ctx context.Context, v WorkloadVersion) error {
	if !validName(v.Environment) || v.Workload == "" || v.DeploymentTarget == "" || v.Version == "" {
		return Errorf(CodeInvalid, "environment, workload, deploymentTarget and version are required")
	}
	v.ReportedAt = h.opts.Now()
	return h.store.Update(ctx, func(tx Tx) error { return tx.PutWorkloadVersion(ctx, v) })
}
