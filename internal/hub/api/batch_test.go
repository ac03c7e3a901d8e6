package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

func (s *server) relayToken() string {
	s.t.Helper()
	var tok api.IssuedToken
	s.must(http.StatusCreated, "POST", "/api/v1/tokens", adminToken, api.TokenRequest{Name: "plant-7", Kind: hub.TokenRelay}, &tok)
	return tok.Token
}

func TestReportBatchResultsPerReport(t *testing.T) {
	s := newServer(t)
	s.must(http.StatusCreated, "POST", "/api/v1/desired", adminToken, desired("dev", "r1"), nil)
	edge1 := s.register("edge-1", "dev", "edge")
	edge2 := s.register("edge-2", "dev", "edge")
	relay := s.relayToken()
	ready := hub.DeploymentReport{DeploymentTarget: "shop-dev", Namespace: "shop", Status: hub.Ready, Revision: "r1"}

	batch := api.ReportBatch{Reports: []api.SignedReport{
		{Token: edge1, Report: report("edge-1", "r1", hub.Compliant, ready)},
		{Token: "ff_nope", Report: report("edge-2", "r1", hub.Compliant, ready)},
		{Token: edge1, Report: report("edge-2", "r1", hub.Compliant, ready)},
		{Token: edge2, Report: report("edge-2", "", hub.Compliant, ready)},
		{Token: relay, Report: report("edge-2", "r1", hub.Compliant, ready)},
		{Token: edge2, Report: report("edge-2", "r1", hub.NonCompliant, ready)},
	}}
	var out api.ReportResults
	s.must(http.StatusOK, "POST", "/api/v1/reports/batch", relay, batch, &out)
	want := []struct {
		status int
		code   string
	}{{202, ""}, {401, "unauthorized"}, {403, "forbidden"}, {400, "invalid"}, {403, "forbidden"}, {202, ""}}
	if len(out.Results) != len(want) {
		t.Fatalf("%d results for %d reports: %+v", len(out.Results), len(want), out.Results)
	}
	for i, w := range want {
		got := out.Results[i]
		if got.Status != w.status || got.Code != w.code || got.Accepted != (w.status == 202) ||
			got.Cluster != batch.Reports[i].Report.Cluster || (w.code != "") != (got.Error != "") {
			t.Errorf("report %d: %+v, want status %d code %q", i, got, w.status, w.code)
		}
	}
	if strings.Contains(fmt.Sprint(out.Results), edge1) {
		t.Fatal("a result shows a token")
	}

	// What was accepted is counted; what was refused is not.
	for name, status := range map[string]hub.ClusterStatus{"edge-1": hub.Compliant, "edge-2": hub.NonCompliant} {
		var c hub.ClusterDetail
		s.must(http.StatusOK, "GET", "/api/v1/clusters/"+name, adminToken, nil, &c)
		if c.Status != status || c.Revision != "r1" {
			t.Errorf("%s: status %q at %q, want %q at r1", name, c.Status, c.Revision, status)
		}
	}
}

func TestReportBatchNeedsARelayToken(t *testing.T) {
	s := newServer(t)
	edge1 := s.register("edge-1", "dev", "edge")
	relay := s.relayToken()
	one := api.ReportBatch{Reports: []api.SignedReport{{Token: edge1, Report: report("edge-1", "r1", hub.Compliant)}}}

	s.mustError(http.StatusUnauthorized, "unauthorized", "POST", "/api/v1/reports/batch", "", one)
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports/batch", edge1, one)
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports/batch", s.readToken(), one)
	s.must(http.StatusOK, "POST", "/api/v1/reports/batch", adminToken, one, nil)
	s.must(http.StatusOK, "POST", "/api/v1/reports/batch", relay, one, nil)

	// A relay token does nothing else: no reads, no writes, no single report.
	s.mustError(http.StatusForbidden, "forbidden", "GET", "/api/v1/environments", relay, nil)
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/clusters", relay, `{}`)
	s.mustError(http.StatusForbidden, "forbidden", "POST", "/api/v1/reports", relay, report("edge-1", "r1", hub.Compliant))

	var listed api.TokenList
	s.must(http.StatusOK, "GET", "/api/v1/tokens?kind=relay", adminToken, nil, &listed)
	if len(listed.Tokens) != 1 || listed.Tokens[0].Name != "plant-7" || listed.Tokens[0].Kind != hub.TokenRelay {
		t.Fatalf("relay tokens listed: %+v", listed.Tokens)
	}
}

func TestReportBatchRejectsTheBatch(t *testing.T) {
	s := newServer(t)
	edge1 := s.register("edge-1", "dev", "edge")
	relay := s.relayToken()
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports/batch", relay, `{"reports":[]}`)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports/batch", relay, `{"reports":[{"token":"x","report":{},"extra":1}]}`)
	s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports/batch", relay, `{"reports":[`)
	many := api.ReportBatch{}
	for range hub.MaxReportsPerBatch + 1 {
		many.Reports = append(many.Reports, api.SignedReport{Token: edge1, Report: report("edge-1", "r1", hub.Compliant)})
	}
	e := s.mustError(http.StatusBadRequest, "invalid", "POST", "/api/v1/reports/batch", relay, many)
	if !strings.Contains(e.Error, fmt.Sprint(hub.MaxReportsPerBatch)) {
		t.Fatalf("message %q does not say the limit", e.Error)
	}
}
