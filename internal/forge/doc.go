// Package forge is the pull-request side of a forge (GitHub first) as `fleetform apply --pr` needs
// it: the PullRequests interface, the marker and branch convention that make a pull request
// fleetform's own, and Supersede, which retires fleetform's older pull requests for an environment
// once a new one is open.
//
// The package owns the rules about which pull requests fleetform may touch; the forge clients
// (forge/github) only speak the forge's API. It imports no forge SDK and does no I/O of its own:
// everything goes through a PullRequests implementation. Tests use the fake in internal/testutil/forgetest.
package forge
