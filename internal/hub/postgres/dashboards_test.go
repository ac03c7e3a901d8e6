package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/testutil/pgtest"
	"github.com/fleetform/fleetform/internal/testutil/storetest"
)

// The Grafana dashboards of deploy/grafana, as far as the test reads them.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int    `json:"id"`
	Title   string `json:"title"`
	Targets []struct {
		RefID  string `json:"refId"`
		RawSQL string `json:"rawSql"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // rows
}

// seedTime is when the dashboard seed starts.
var seedTime = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// at is a time of the seed, formatted as the test formats cells.
func at(hhmm string) string { return "2026-11-01T" + hhmm + ":00Z" }

// dashboardVariables are the values the test gives template variables, per dashboard.
var dashboardVariables = map[string]map[string][]string{
	"fleetform-environment-state":         {"environment": {"dev", "prod"}},
	"fleetform-environment-discrepancies": {"from": {"dev"}, "to": {"prod"}},
	"fleetform-cluster-state": {"environment": {"dev"}, "cluster_type": {"large", "small"},
		"deployment_target": {"shop-web"}, "state": {"compliant", "failed", "progressing", "unknown"}},
	"fleetform-deployment-history": {"environment": {"dev"}, "workload": {"billing", "shop"}},
}

// wantVariables are the values each query variable must offer for the seed.
var wantVariables = map[string][]string{
	"fleetform-environment-state/environment":        {"dev", "prod"},
	"fleetform-environment-discrepancies/from":       {"dev", "prod"},
	"fleetform-environment-discrepancies/to":         {"prod"},
	"fleetform-cluster-state/environment":            {"dev", "prod"},
	"fleetform-cluster-state/cluster_type":           {"large", "small"},
	"fleetform-cluster-state/deployment_target":      {"billing-api", "shop-web"},
	"fleetform-deployment-history/environment":       {"dev", "prod"},
	"fleetform-deployment-history/workload":          {"billing", "shop"},
	"fleetform-environment-discrepancies/datasource": nil,
	"fleetform-environment-state/datasource":         nil,
	"fleetform-cluster-state/datasource":             nil,
	"fleetform-deployment-history/datasource":        nil,
	"fleetform-cluster-state/state":                  nil,
}

// wantPanels are the rows every panel must return for the seed, by dashboard uid and title.
var wantPanels = map[string][][]string{
	"fleetform-environment-state/Environment state": {
		{"dev", "billing", "billing-api", "large", "r2", "0.9.0", "2", "0", "1", "1", "0"},
		{"dev", "shop", "shop-web", "large", "r2", "1.2.0", "2", "1", "0", "1", "0"},
		{"dev", "shop", "shop-web", "small", "r2", "1.2.0", "1", "1", "0", "0", "0"},
		{"prod", "shop", "shop-web", "large", "r7", "1.1.0", "2", "1", "0", "0", "1"},
	},
	"fleetform-environment-state/Deployed versions": {
		{"dev", "billing-api", "", "progressing", "1"},
		{"dev", "billing-api", "v0.9.0", "failed", "1"},
		{"dev", "shop-web", "", "compliant", "1"},
		{"dev", "shop-web", "v1.1.0", "progressing", "1"},
		{"dev", "shop-web", "v1.2.0", "compliant", "1"},
		{"prod", "shop-web", "", "unknown", "1"},
		{"prod", "shop-web", "v1.1.0", "compliant", "1"},
	},
	"fleetform-environment-discrepancies/Environment discrepancies": {
		{"billing", "true", "0.9.0", "", "large", "", "", "0 / 2", "0 / 0", "r2", ""},
		{"shop", "true", "1.2.0", "1.1.0", "large, small", "large", "REPLICAS", "2 / 3", "1 / 2", "r2", "r7"},
	},
	"fleetform-environment-discrepancies/All environments": {
		{"billing", "dev", "0.9.0 (0/2 compliant)"},
		{"shop", "dev", "1.2.0 (2/3 compliant)"},
		{"shop", "prod", "1.1.0 (1/2 compliant)"},
	},
	"fleetform-cluster-state/States": {
		{"compliant", "2"},
		{"progressing", "1"},
	},
	"fleetform-cluster-state/Clusters state": {
		{"d2", "large", "shop", "shop-web", "progressing", "Ready", "v1.1.0", "r1", "r2", at("12:01"), at("12:01"), "", "./large"},
		{"d1", "large", "shop", "shop-web", "compliant", "Ready", "v1.2.0", "r2", "r2", at("12:03"), at("12:03"), "1 of 2 failed", ""},
		{"d3", "small", "shop", "shop-web", "compliant", "", "", "r2", "r2", "NULL", at("12:03"), "", ""},
	},
	"fleetform-deployment-history/Desired revisions": {
		{at("12:02"), "r2", "c0ffee", "true", "billing", "billing-api", "large", "1", "0", "1", "0"},
		{at("12:02"), "r2", "c0ffee", "true", "shop", "shop-web", "large", "1", "1", "0", "0"},
		{at("12:02"), "r2", "c0ffee", "true", "shop", "shop-web", "small", "1", "1", "0", "0"},
		{at("12:00"), "r1", "", "false", "shop", "shop-web", "large", "1", "1", "0", "0"},
	},
	"fleetform-deployment-history/Status transitions": {
		{at("12:03"), "cluster", "d3", "small", "", "", "r2", "", "Compliant@r2", ""},
		{at("12:03"), "deployment", "d1", "large", "shop", "shop-web", "v1.2.0", "", "Ready", ""},
		{at("12:03"), "deployment", "d1", "large", "billing", "billing-api", "v0.9.0", "", "Failed", ""},
		{at("12:03"), "cluster", "d1", "large", "", "", "r2", "", "Compliant@r2", "1 of 2 failed"},
		{at("12:02"), "desired", "", "", "", "", "r2", "", "", "3 assignment(s) scheduled"},
		{at("12:01"), "deployment", "d2", "large", "shop", "shop-web", "v1.1.0", "", "Ready", ""},
		{at("12:01"), "cluster", "d2", "large", "", "", "r1", "", "Compliant@r1", ""},
		{at("12:00"), "desired", "", "", "", "", "r1", "", "", "1 assignment(s) scheduled"},
		{at("12:00"), "registration", "d3", "small", "", "", "", "", "", "registered"},
		{at("12:00"), "registration", "d2", "large", "", "", "", "", "", "registered"},
		{at("12:00"), "registration", "d1", "large", "", "", "", "", "", "registered"},
	},
}

// TestDashboards runs every panel's SQL of deploy/grafana against a seeded store and checks
// its rows, and checks that the views agree with the rollout API.
func TestDashboards(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDatabase(t)
	h := seedDashboards(t, dsn)
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	files, err := filepath.Glob("../../../deploy/grafana/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("dashboards: %v, %v", files, err)
	}
	seen := map[string]bool{}
	uids := map[string]string{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if other, dup := uids[d.UID]; dup || d.UID == "" || d.Title == "" {
			t.Errorf("%s: uid %q (also in %q), title %q: want a unique uid and a title", file, d.UID, other, d.Title)
		}
		uids[d.UID] = file
		vars, ok := dashboardVariables[d.UID]
		if !ok {
			t.Fatalf("%s: no test values for dashboard %q", file, d.UID)
		}
		checkVariables(t, conn, d, vars, seen)
		ids := map[int]bool{}
		for _, p := range flatten(d.Panels) {
			key := d.UID + "/" + p.Title
			if ids[p.ID] || seen[key] {
				t.Errorf("%s: panel id %d or title %q is not unique", file, p.ID, p.Title)
			}
			ids[p.ID] = true
			seen[key] = true
			want, ok := wantPanels[key]
			if !ok {
				t.Errorf("%s: no expected rows for panel %q", file, p.Title)
				continue
			}
			if len(p.Targets) != 1 {
				t.Errorf("%s: want one query, got %d", key, len(p.Targets))
				continue
			}
			got := runSQL(t, conn, key, interpolate(t, key, p.Targets[0].RawSQL, vars))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", key, diff)
			}
		}
	}
	for key := range wantPanels {
		if !seen[key] {
			t.Errorf("expected rows for %s, which no dashboard has", key)
		}
	}
	checkViewsAgreeWithRollout(t, h, conn)
}

func flatten(panels []panel) []panel {
	var out []panel
	for _, p := range panels {
		if len(p.Targets) > 0 {
			out = append(out, p)
		}
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// checkVariables runs the query variables' SQL.
func checkVariables(t *testing.T, conn *pgx.Conn, d dashboard, vars map[string][]string, seen map[string]bool) {
	t.Helper()
	for _, v := range d.Templating.List {
		key := d.UID + "/" + v.Name
		want, ok := wantVariables[key]
		if !ok {
			t.Errorf("%s: variable %q is not known to the test", d.UID, v.Name)
			continue
		}
		if _, ok := vars[v.Name]; !ok && v.Type != "datasource" {
			t.Errorf("%s: no test value for variable %q", d.UID, v.Name)
		}
		if v.Type != "query" {
			continue
		}
		var sql string
		if err := json.Unmarshal(v.Query, &sql); err != nil {
			t.Errorf("%s: query is not a string: %v", key, err)
			continue
		}
		var got []string
		for _, row := range runSQL(t, conn, key, interpolate(t, key, sql, vars)) {
			got = append(got, row[0])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("variable %s (-want +got):\n%s", key, diff)
		}
		seen[key] = true
	}
}

var (
	macro    = regexp.MustCompile(`\$__(timeFilter)\(([^)]*)\)|\$__(timeFrom|timeTo)\(\)`)
	variable = regexp.MustCompile(`\$\{(\w+)(?::(\w+))?\}|\$(\w+)|\[\[(\w+)\]\]`)
)

// interpolate does what Grafana does with a query: the time macros for the seed's day, and the
// variables, which must all use the sqlstring format (quoted and escaped).
func interpolate(t *testing.T, key, sql string, vars map[string][]string) string {
	t.Helper()
	from, to := seedTime.Add(-time.Hour).Format(time.RFC3339), seedTime.Add(24*time.Hour).Format(time.RFC3339)
	sql = macro.ReplaceAllStringFunc(sql, func(m string) string {
		parts := macro.FindStringSubmatch(m)
		switch {
		case parts[1] == "timeFilter":
			return fmt.Sprintf("%s BETWEEN '%s' AND '%s'", parts[2], from, to)
		case parts[3] == "timeFrom":
			return "'" + from + "'"
		default:
			return "'" + to + "'"
		}
	})
	return variable.ReplaceAllStringFunc(sql, func(m string) string {
		parts := variable.FindStringSubmatch(m)
		if parts[1] == "" || parts[2] != "sqlstring" {
			t.Errorf("%s: %s: write variables as ${name:sqlstring} (quoted and escaped)", key, m)
			return m
		}
		values, ok := vars[parts[1]]
		if !ok {
			t.Errorf("%s: no test value for %s", key, m)
			return m
		}
		quoted := make([]string, len(values))
		for i, v := range values {
			quoted[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		return strings.Join(quoted, ",")
	})
}

// runSQL runs a query and formats its cells.
func runSQL(t *testing.T, conn *pgx.Conn, key, sql string) [][]string {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		t.Errorf("%s: %v\n%s", key, err, sql)
		return nil
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		values, err := rows.Values()
		if err != nil {
			t.Errorf("%s: %v", key, err)
			return nil
		}
		row := make([]string, len(values))
		for i, v := range values {
			row[i] = formatCell(v)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Errorf("%s: %v\n%s", key, err, sql)
	}
	return out
}

func formatCell(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

// seedDashboards fills a store: dev (r1, then r2 with three targets on two cluster types) and
// prod (r7), five clusters, versions, and reports that leave every rollout state somewhere.
func seedDashboards(t *testing.T, dsn string) *hub.Hub {
	t.Helper()
	ctx := context.Background()
	now := seedTime
	h := hub.New(open(t, dsn), hub.Options{Now: func() time.Time { return now }})
	storetest.RunHub(t, h)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []hub.Cluster{{Name: "d1", Environment: "dev", ClusterType: "large"}, {Name: "d2", Environment: "dev", ClusterType: "large"},
		{Name: "d3", Environment: "dev", ClusterType: "small"}, {Name: "p1", Environment: "prod", ClusterType: "large"},
		{Name: "p2", Environment: "prod", ClusterType: "large"}} {
		_, err := h.RegisterCluster(ctx, c, false)
		must(err)
	}
	shop := func(ct, replicas string) hub.DesiredAssignment {
		return hub.DesiredAssignment{Workload: "shop", DeploymentTarget: "shop-web", ClusterType: ct, Namespace: "shop",
			Config: map[string]any{"REPLICAS": replicas, "REGION": "west"}}
	}
	billing := hub.DesiredAssignment{Workload: "billing", DeploymentTarget: "billing-api", ClusterType: "large", Namespace: "billing"}
	report := func(cluster, revision, message, path string, deps ...hub.DeploymentReport) {
		t.Helper()
		must(h.Report(ctx, hub.Principal{Kind: hub.TokenCluster, Cluster: cluster}, hub.Report{Cluster: cluster, Revision: revision,
			Status: hub.Compliant, Message: message, GitOpsPath: path, ObservedAt: now, Deployments: deps}))
	}
	dep := func(dt string, s hub.DeploymentStatus, version string) hub.DeploymentReport {
		return hub.DeploymentReport{DeploymentTarget: dt, Namespace: "ns", Status: s, Revision: version}
	}
	must(h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r1", Assignments: []hub.DesiredAssignment{shop("large", "1")}}))
	now = now.Add(time.Minute)
	report("d2", "r1", "", "./large", dep("shop-web", hub.Ready, "v1.1.0"))
	now = now.Add(time.Minute)
	must(h.PostDesired(ctx, hub.Desired{Environment: "dev", Revision: "r2", PromotedCommit: "c0ffee",
		Assignments: []hub.DesiredAssignment{shop("large", "1"), shop("small", "1"), billing}}))
	must(h.PostDesired(ctx, hub.Desired{Environment: "prod", Revision: "r7", Assignments: []hub.DesiredAssignment{shop("large", "3")}}))
	for _, v := range []hub.WorkloadVersion{{Environment: "dev", Workload: "shop", DeploymentTarget: "shop-web", Version: "1.2.0"},
		{Environment: "dev", Workload: "billing", DeploymentTarget: "billing-api", Version: "0.9.0"},
		{Environment: "prod", Workload: "shop", DeploymentTarget: "shop-web", Version: "1.1.0"}} {
		must(h.PostWorkloadVersion(ctx, v))
	}
	now = now.Add(time.Minute)
	report("d1", "r2", "1 of 2 failed", "", dep("shop-web", hub.Ready, "v1.2.0"), dep("billing-api", hub.Failed, "v0.9.0"))
	report("d3", "r2", "", "")
	report("p1", "r7", "", "", dep("shop-web", hub.Ready, "v1.1.0"))
	return h
}

// checkViewsAgreeWithRollout compares v_environment_state (counters) and v_cluster_state
// (recomputed from the clusters' reports) with the rollout API.
func checkViewsAgreeWithRollout(t *testing.T, h *hub.Hub, conn *pgx.Conn) {
	t.Helper()
	for _, env := range []string{"dev", "prod"} {
		r, err := h.Rollout(context.Background(), env)
		if err != nil {
			t.Fatal(err)
		}
		var api [][]string
		for _, tr := range r.Targets {
			api = append(api, []string{tr.ClusterType, tr.DeploymentTarget, fmt.Sprint(tr.Clusters), fmt.Sprint(tr.Compliant),
				fmt.Sprint(tr.Failed), fmt.Sprint(tr.Progressing), fmt.Sprint(tr.Unknown)})
		}
		for _, q := range []string{
			`SELECT cluster_type, deployment_target, clusters, compliant, failed, progressing, unknown FROM v_environment_state
				WHERE environment = '` + env + `' ORDER BY cluster_type, deployment_target`,
			`SELECT cluster_type, deployment_target, count(*), count(*) FILTER (WHERE state = 'compliant'),
				count(*) FILTER (WHERE state = 'failed'), count(*) FILTER (WHERE state = 'progressing'),
				count(*) FILTER (WHERE state = 'unknown') FROM v_cluster_state WHERE environment = '` + env + `'
				GROUP BY cluster_type, deployment_target ORDER BY cluster_type, deployment_target`,
		} {
			if diff := cmp.Diff(api, runSQL(t, conn, env, q)); diff != "" {
				t.Errorf("%s: the view disagrees with the rollout API (-api +view):\n%s\n%s", env, diff, q)
			}
		}
	}
}
