package dev

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// writeWrk registers the clusters, posts the desired state and writes a wrk script that
// posts one report per request, each with its cluster's token, instead of loading the hub
// itself: wrk's load costs the shared cores less than a Go client's.
func (o *loadtestOptions) writeWrk(ctx context.Context, e *env, admin *client.Client) error {
	clusters, err := o.register(ctx, e, admin)
	if err != nil {
		return err
	}
	revision, err := o.postDesired(ctx, admin)
	if err != nil {
		return err
	}
	f, err := os.Create(o.wrk)
	if err != nil {
		return err
	}
	if err := o.wrkScript(f, clusters, revision); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// wrkScript writes the wrk script. The clusters are split between wrk's threads (THREADS,
// default 2, must be wrk's -t), so that a cluster's reports are sent in order by one thread;
// each report is newer than the one before it by a microsecond. MODE=heartbeat (the default)
// sends the cluster's state again; MODE=change flips a deployment between Ready and
// Progressing with every report of a cluster, so every report is a state change.
// STAMP=second dates each report by the second it is sent instead: a cluster's second
// report within a second is not newer, and the hub ignores it.
func (o *loadtestOptions) wrkScript(w io.Writer, clusters []*loadCluster, revision string) error {
	var b strings.Builder
	b.WriteString("-- written by fleetform-dev loadtest --wrk: wrk -t THREADS -c 64 -d 20s -s THIS HUB\n")
	b.WriteString("local clusters = {\n")
	for _, c := range clusters {
		fmt.Fprintf(&b, "  {%q, %q},\n", c.name, c.token)
	}
	b.WriteString("}\n")
	fmt.Fprintf(&b, "local revision, targets, prefix = %q, %d, %q\n", revision, o.targets, o.targetPrefix())
	b.WriteString(`local mode = os.getenv("MODE") or "heartbeat"
local per_second = os.getenv("STAMP") == "second"
local threads = tonumber(os.getenv("THREADS") or "2")
local next_id = 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
end
local mine, flips, at, base, seq = {}, {}, 0, 0, 0
function init(args)
  for i = 1 + id, #clusters, threads do table.insert(mine, clusters[i]) end
  base = os.time()
end
function request()
  at = at % #mine + 1
  seq = seq + 1
  local c = mine[at]
  local observed = os.date("!%Y-%m-%dT%H:%M:%S", base + math.floor(seq / 1000000)) .. string.format(".%06dZ", seq % 1000000)
  if per_second then observed = os.date("!%Y-%m-%dT%H:%M:%SZ") end
  local flip = 0
  if mode == "change" then
    flip = (flips[at] or 0) + 1
    flips[at] = flip
  end
  local deps = {}
  for t = 0, targets - 1 do
    local status = "Ready"
    if t == 0 and flip % 2 == 1 then status = "Progressing" end
    table.insert(deps, string.format('{"deploymentTarget":"%s%d","namespace":"loadtest","status":"%s","revision":"v1"}', prefix, t, status))
  end
  local body = string.format('{"cluster":"%s","revision":"%s","status":"Compliant","observedAt":"%s","deployments":[%s]}',
    c[1], revision, observed, table.concat(deps, ","))
  return wrk.format("POST", "/api/v1/reports", {["Authorization"] = "Bearer " .. c[2], ["Content-Type"] = "application/json"}, body)
end
`)
	_, err := io.WriteString(w, b.String())
	return err
}

// postDesired posts the run's desired state: the targets on the cluster type; it returns
// the revision.
func (o *loadtestOptions) postDesired(ctx context.Context, admin *client.Client) (string, error) {
	revision := fmt.Sprintf("loadtest-%d", time.Now().UnixNano())
	d := hub.Desired{Environment: o.environment, Revision: revision, GitOpsRepo: "loadtest", Branch: o.environment}
	for i := range o.targets {
		d.Assignments = append(d.Assignments, hub.DesiredAssignment{Workload: "loadtest", DeploymentTarget: o.target(i),
			ClusterType: o.clusterType, Namespace: "loadtest"})
	}
	_, err := admin.PostDesired(ctx, d)
	return revision, err
}
