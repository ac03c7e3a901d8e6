// Package serve is `fleetform serve`: the long-running service that watches the control
// plane and the repositories it names, applies every environment a change affects to its
// GitOps repository (incrementally, exactly as `fleetform apply`), promotes where the chain
// says so, and answers on one port with the hub's API, webhooks, health and metrics. With
// several replicas on one PostgreSQL database, one of them (the leader) does the work and
// all of them answer.
package serve
