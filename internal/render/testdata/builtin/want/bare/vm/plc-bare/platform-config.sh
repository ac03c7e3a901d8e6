# Platform configuration of plc-bare on vm (bare), rendered by fleetform.
