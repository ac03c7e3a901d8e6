package hub

import (
	"context"
	"time"
)

// Store persists the hub's state. internal/hub/sqlite and internal/hub/postgres implement
// it, and internal/testutil/storetest checks both with the same suite.
type Store interface {
	// Update runs fn in a read-write transaction; fn's error rolls it back.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Reader) error) error
	// Close releases the store.
	Close() error
}

// Reader reads the hub's state.
type Reader interface {
	// Token returns the token with this hash (ErrNotFound).
	Token(ctx context.Context, hash []byte) (Token, error)
	// TokenByID returns the token with this ID (ErrNotFound).
	TokenByID(ctx context.Context, id string) (Token, error)
	// Tokens lists tokens by kind, then cluster, name and creation.
	Tokens(ctx context.Context, f TokenFilter) ([]Token, error)
	// HasAdminToken reports whether an admin token is active at now (neither revoked nor
	// expired).
	HasAdminToken(ctx context.Context, now time.Time) (bool, error)
	// Cluster returns a cluster (ErrNotFound).
	Cluster(ctx context.Context, name string) (ClusterRecord, error)
	// ClusterEnvironments returns the environments of the named clusters, by cluster name,
	// in one round trip and without locking them (a cluster's environment never changes);
	// unregistered names are left out.
	ClusterEnvironments(ctx context.Context, names []string) (map[string]string, error)
	// Clusters lists an environment's clusters ("" for all), by name.
	Clusters(ctx context.Context, env string) ([]ClusterRecord, error)
	// DriftCounts counts an environment's clusters that are silent (never reported, or
	// stale), behind (fresh, at another revision than behindOf; not counted when behindOf
	// is ""), failing (reporting NonCompliant while fresh, or with a Failed deployment) and
	// on a wrong path (reconciling a folder that is not their cluster type's), each with the
	// first limit names by name: what Drift lists, counted by the store.
	DriftCounts(ctx context.Context, env, behindOf string, limit int) (DriftCounts, error)
	// SearchClusters lists up to limit of the clusters f selects, by name, after skipping
	// offset of them, and counts them all.
	SearchClusters(ctx context.Context, f ClusterFilter, offset, limit int) ([]ClusterRecord, int, error)
	// Deployments returns a cluster's deployment states, by deployment target.
	Deployments(ctx context.Context, cluster string) ([]DeploymentState, error)
	// Desired returns an environment's desired state at a revision (ErrNotFound).
	Desired(ctx context.Context, env, revision string) (Desired, error)
	// LatestDesired returns an environment's most recently posted desired state (ErrNotFound).
	LatestDesired(ctx context.Context, env string) (Desired, error)
	// Environments lists the environments with clusters or desired states, sorted.
	Environments(ctx context.Context) ([]string, error)
	// TargetCounts returns the counters of an environment's targets at a revision.
	TargetCounts(ctx context.Context, env, revision string) ([]TargetCount, error)
	// ClusterCounts returns, per cluster type of an environment, the registered clusters
	// and the fresh ones per revision.
	ClusterCounts(ctx context.Context, env string) ([]ClusterCount, error)
	// WorkloadVersions returns the latest version of every deployment target of an
	// environment.
	WorkloadVersions(ctx context.Context, env string) ([]WorkloadVersion, error)
	// History returns events, newest first.
	History(ctx context.Context, f HistoryFilter) ([]Event, error)
	// FailingDeployments returns the deployments of an environment's clusters whose status
	// is Failed, by cluster.
	FailingDeployments(ctx context.Context, env string) ([]ClusterDeployment, error)
	// StaleClusters returns, oldest first, up to limit fresh clusters whose latest report
	// was received before cutoff and, when there are fewer, when the oldest of the other
	// fresh clusters was received (zero: there is none).
	StaleClusters(ctx context.Context, cutoff time.Time, limit int) (stale []string, nextReceived time.Time, err error)
	// Sources returns the git sources serve recorded, by URL and branch.
	Sources(ctx context.Context) ([]SourceState, error)
	// Syncs returns up to limit syncs of an environment, the one recorded last first (their
	// Failed lists are never nil).
	Syncs(ctx context.Context, env string, limit int) ([]SyncRecord, error)
}

// Tx changes the hub's state, inside Store.Update.
type Tx interface {
	Reader
	// PutTokens stores tokens, or updates those with the same hash (their IDs and creation
	// times stay); of two with the same hash, the later one is stored.
	PutTokens(ctx context.Context, ts ...Token) error
	// DeleteClusterTokens removes a cluster's tokens.
	DeleteClusterTokens(ctx context.Context, cluster string) error
	// DeleteEndedTokens removes the tokens of kind that expired before t.
	DeleteEndedTokens(ctx context.Context, kind string, before time.Time) error
	// LockEnvironment serialises work on an environment across hub replicas: ingest and
	// staleness sweeps take it shared, posting a desired state takes it exclusive. Stores
	// with a single writer may do nothing.
	LockEnvironment(ctx context.Context, env string, exclusive bool) error
	// LockCluster returns a cluster for update (ErrNotFound); the row stays locked until
	// the transaction ends.
	LockCluster(ctx context.Context, name string) (ClusterRecord, error)
	// LockClusters locks the named clusters at once, as LockCluster does one, and returns
	// the registered ones in the order of names; unregistered names are left out. Writers
	// pass the names sorted: the order in which every writer locks clusters.
	LockClusters(ctx context.Context, names []string) ([]ClusterRecord, error)
	// PrefetchDeployments reads ahead, at once, the deployment states of clusters the
	// transaction has locked, for its later Deployments calls. A store whose Deployments
	// costs no round trip may do nothing.
	PrefetchDeployments(ctx context.Context, clusters []string) error
	// InsertClusters adds clusters at once (ErrExists when a name is taken, or named twice;
	// the transaction must then be abandoned, as after any error).
	InsertClusters(ctx context.Context, cs ...ClusterRecord) error
	// UpdateCluster replaces a cluster's registration and latest report.
	UpdateCluster(ctx context.Context, c ClusterRecord) error
	// TouchCluster records the times of a report that changed nothing else.
	TouchCluster(ctx context.Context, name string, observedAt, receivedAt time.Time) error
	// SetDeployments replaces the given deployment states of a cluster and removes the
	// named ones.
	SetDeployments(ctx context.Context, cluster string, put []DeploymentState, remove []string) error
	// AddCounts adds deltas to the counters (rows reaching zero may be dropped).
	AddCounts(ctx context.Context, targets []TargetCount, clusters []ClusterCount) error
	// DeleteTargetCounts removes the target counters of an environment at a revision.
	DeleteTargetCounts(ctx context.Context, env, revision string) error
	// PutDesired stores a desired state (replacing one for the same environment and revision).
	PutDesired(ctx context.Context, d Desired) error
	// PutWorkloadVersion stores a workload version.
	PutWorkloadVersion(ctx context.Context, v WorkloadVersion) error
	// AddEvents appends history events.
	AddEvents(ctx context.Context, events []Event) error
	// PruneHistory removes at most limit events older than before, oldest first, and
	// returns how many.
	PruneHistory(ctx context.Context, before time.Time, limit int) (int64, error)
	// PruneDesired removes desired states older than before, keeping the latest of each
	// environment, with their target counters, and returns how many.
	PruneDesired(ctx context.Context, before time.Time) (int64, error)
	// PutSource stores a git source's state, replacing the one with the same URL and branch.
	PutSource(ctx context.Context, s SourceState) error
	// DeleteSource removes a git source's state (none is no error).
	DeleteSource(ctx context.Context, url, branch string) error
	// AddSync appends a sync of an environment and removes the environment's syncs recorded
	// before its latest keep.
	AddSync(ctx context.Context, r SyncRecord, keep int) error
}

// TargetCount is a counter: how many fresh clusters of a cluster type, at a revision, are in
// a state for a deployment target (or a delta to add to it).
type TargetCount struct {
	Environment      string
	ClusterType      string
	Revision         string
	DeploymentTarget string
	State            State
	Count            int
}

// ClusterCount is a counter: how many fresh clusters of a cluster type are at a revision,
// or, with Revision RegisteredRevision, how many are registered (or a delta to add).
type ClusterCount struct {
	Environment string
	ClusterType string
	Revision    string
	Count       int
}

// RegisteredRevision is the ClusterCount revision that counts registered clusters
// (reports always carry a revision).
const RegisteredRevision = ""

// ClusterDeployment is a deployment state with its cluster.
type ClusterDeployment struct {
	Cluster     string `json:"cluster"`
	ClusterType string `json:"clusterType"`
	DeploymentState
}

// StaleScan builds the answer of StaleClusters from fresh clusters read oldest first (a
// store reads limit+1 of them): the stale ones up to Limit, and the report time of the
// first that is not stale.
type StaleScan struct {
	Cutoff time.Time
	Limit  int
	Stale  []string
	Next   time.Time
}

// Add takes the next fresh cluster, in order of its latest report.
func (s *StaleScan) Add(name string, received time.Time) {
	switch {
	case received.Before(s.Cutoff) && len(s.Stale) < s.Limit:
		s.Stale = append(s.Stale, name)
	case s.Next.IsZero() && !received.Before(s.Cutoff):
		s.Next = received
	}
}
