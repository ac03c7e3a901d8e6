// Package hub is the deployment observability hub's domain: clusters and their tokens, what
// fleetform scheduled (desired state per GitOps revision), what clusters report, and the
// questions asked of them (rollout, history, environment diff, drift); and what fleetform
// serve records for all its replicas to answer (the git sources it polls, the syncs of each
// environment).
//
// The logic lives here once; a Store (internal/hub/sqlite, internal/hub/postgres) only
// persists rows, behind the small Tx interface. Rollout answers come from counters kept up to
// date as clusters change (never from scanning every cluster's deployments), and reports are
// committed in groups, so that thousands of reports per second are durable when acknowledged.
//
// This package must not import net/http or a database driver.
package hub
