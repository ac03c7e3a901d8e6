// Package client is a typed Go client of the hub's HTTP API (internal/hub/api).
//
// Errors the hub answers are *Error values carrying the HTTP status and the hub's message;
// they unwrap to a *hub.Error, so hub.ErrorCode works on them, and a 404 matches
// hub.ErrNotFound with errors.Is.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/api"
)

// DefaultTimeout bounds a request when New is given no *http.Client.
const DefaultTimeout = 30 * time.Second

// Client calls one hub with one token.
type Client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// New returns a client of the hub at baseURL (http or https) sending token as a bearer
// token. httpClient nil: a client with DefaultTimeout.
func New(baseURL, token string, httpClient *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil {
		return nil, fmt.Errorf("hub URL %q: %w", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("hub URL %q: want http://HOST:PORT or https://HOST:PORT", baseURL)
	}
	if httpClient == nil {
		httpClient = &http.Client{Timeout: DefaultTimeout}
	}
	return &Client{base: u, token: token, http: httpClient}, nil
}

// HTTPClient returns the *http.Client the client sends with (to share its connections).
func (c *Client) HTTPClient() *http.Client { return c.http }

// Error is an error answer of the hub.
type Error struct {
	Method, Path string
	// Status is the HTTP status; Code and Message are the hub's (Code may be empty when the
	// answer was not the hub's JSON, e.g. from a proxy).
	Status  int
	Code    hub.Code
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("hub: %s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Message)
}

// Unwrap returns the hub error, so that hub.ErrorCode and errors.As(*hub.Error) see it.
func (e *Error) Unwrap() error { return &hub.Error{Code: e.code(), Message: e.Message} }

// Is matches hub.ErrNotFound for a 404 and hub.ErrExists for a 409.
func (e *Error) Is(target error) bool {
	switch target {
	case hub.ErrNotFound:
		return e.code() == hub.CodeNotFound
	case hub.ErrExists:
		return e.code() == hub.CodeConflict
	}
	return false
}

// code is the hub's code, or the one the status implies.
func (e *Error) code() hub.Code {
	if e.Code != "" {
		return e.Code
	}
	return api.CodeOf(e.Status)
}

// do sends a request with an optional JSON body and decodes a JSON answer into out (if not
// nil) when the status is want.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any, want int) error {
	resp, err := c.send(ctx, method, path, query, body)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != want {
		return errorFrom(resp, method, path)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("hub: %s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// send sends a request with the token and body (JSON, when not nil) and returns the answer,
// whose body the caller closes.
func (c *Client) send(ctx context.Context, method, path string, query url.Values, body any) (*http.Response, error) {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub: %s %s: %w", method, path, err)
	}
	return resp, nil
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

func errorFrom(resp *http.Response, method, path string) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	e := &Error{Method: method, Path: path, Status: resp.StatusCode}
	var body api.ErrorBody
	if err := json.Unmarshal(data, &body); err == nil && body.Error != "" {
		e.Code, e.Message = hub.Code(body.Code), body.Error
		return e
	}
	e.Message = strings.TrimSpace(string(data))
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}

// RegisterCluster registers a cluster and returns its token; rotate issues a new token for
// an existing cluster (409 otherwise).
func (c *Client) RegisterCluster(ctx context.Context, r api.ClusterRegistration, rotate bool) (api.IssuedToken, error) {
	var q url.Values
	if rotate {
		q = url.Values{"rotate": {"true"}}
	}
	var out api.IssuedToken
	return out, c.do(ctx, http.MethodPost, "/api/v1/clusters", q, r, &out, http.StatusCreated)
}

// RegisterClusters registers clusters in one transaction and returns their tokens in order;
// rotate issues new tokens for existing clusters (a conflict otherwise fails the batch).
func (c *Client) RegisterClusters(ctx context.Context, rs []api.ClusterRegistration, rotate bool) ([]api.IssuedToken, error) {
	var q url.Values
	if rotate {
		q = url.Values{"rotate": {"true"}}
	}
	var out api.IssuedTokens
	err := c.do(ctx, http.MethodPost, "/api/v1/clusters/batch", q, api.ClusterBatch{Clusters: rs}, &out, http.StatusCreated)
	if err == nil && len(out.Clusters) != len(rs) {
		err = fmt.Errorf("hub: POST /api/v1/clusters/batch: %d tokens for %d clusters", len(out.Clusters), len(rs))
	}
	return out.Clusters, err
}

// WithToken returns a client of the same hub, sharing its connections, that sends token
// (a cluster's, to report for it).
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// CreateReadToken issues a read-only token labelled name.
func (c *Client) CreateReadToken(ctx context.Context, name string) (api.IssuedToken, error) {
	var out api.IssuedToken
	return out, c.do(ctx, http.MethodPost, "/api/v1/tokens", nil, api.TokenRequest{Name: name}, &out, http.StatusCreated)
}

// PostDesired records what fleetform scheduled for an environment at a GitOps revision.
func (c *Client) PostDesired(ctx context.Context, d hub.Desired) (api.DesiredAccepted, error) {
	var out api.DesiredAccepted
	return out, c.do(ctx, http.MethodPost, "/api/v1/desired", nil, d, &out, http.StatusCreated)
}

// PostWorkloadVersion records the version application CI deployed to a deployment target.
func (c *Client) PostWorkloadVersion(ctx context.Context, v hub.WorkloadVersion) error {
	return c.do(ctx, http.MethodPost, "/api/v1/versions", nil, v, nil, http.StatusCreated)
}

// Report posts a cluster's report (with the cluster's token); nil means it is durable.
func (c *Client) Report(ctx context.Context, r hub.Report) error {
	return c.do(ctx, http.MethodPost, "/api/v1/reports", nil, r, nil, http.StatusAccepted)
}

// ReportBatch posts many clusters' reports, each with its cluster's token, in one request
// (with a relay token or the admin token). It returns one result per report, in order;
// an error means the batch as a whole was refused or not answered.
func (c *Client) ReportBatch(ctx context.Context, reports []api.SignedReport) ([]api.ReportResult, error) {
	var out api.ReportResults
	if err := c.do(ctx, http.MethodPost, "/api/v1/reports/batch", nil, api.ReportBatch{Reports: reports}, &out, http.StatusOK); err != nil {
		return nil, err
	}
	if len(out.Results) != len(reports) {
		return nil, fmt.Errorf("hub: POST /api/v1/reports/batch: %d results for %d reports", len(out.Results), len(reports))
	}
	return out.Results, nil
}

// Approve records that commit may be promoted into env, by whom.
func (c *Client) Approve(ctx context.Context, env, commit, by string) error {
	return c.do(ctx, http.MethodPost, "/api/v1/approvals", nil, api.Approval{Environment: env, Commit: commit, By: by}, nil, http.StatusCreated)
}

// Approvals returns the approvals of env, newest first.
func (c *Client) Approvals(ctx context.Context, env string) ([]hub.Event, error) {
	var out api.ApprovalList
	err := c.do(ctx, http.MethodGet, "/api/v1/approvals", url.Values{"environment": {env}}, nil, &out, http.StatusOK)
	return out.Approvals, err
}

// Approved reports whether commit was approved for env.
func (c *Client) Approved(ctx context.Context, env, commit string) (bool, error) {
	events, err := c.Approvals(ctx, env)
	if err != nil {
		return false, err
	}
	for _, e := range events {
		if e.Revision == commit {
			return true, nil
		}
	}
	return false, nil
}

// Approvers returns who approved commit for env, one name per distinct identity; with
// distinctFromAuthor, the authors of the change are left out (hub.DistinctApprovers).
func (c *Client) Approvers(ctx context.Context, env, commit string, distinctFromAuthor bool) ([]string, error) {
	approvals, err := c.Approvals(ctx, env)
	if err != nil {
		return nil, err
	}
	var authors []hub.Event
	if distinctFromAuthor && commit != "" {
		f := hub.HistoryFilter{Kind: hub.EventAuthoring, Revision: commit, Limit: hub.MaxHistoryLimit}
		if authors, err = c.History(ctx, f); err != nil {
			return nil, err
		}
	}
	return hub.DistinctApprovers(approvals, authors, commit), nil
}

// Record appends a promotion event (promotion, refusal, override) to the history.
func (c *Client) Record(ctx context.Context, e hub.Event) error {
	return c.do(ctx, http.MethodPost, "/api/v1/events", nil, e, nil, http.StatusCreated)
}

// Environments lists the environments the hub knows.
func (c *Client) Environments(ctx context.Context) ([]string, error) {
	var out api.EnvironmentList
	err := c.do(ctx, http.MethodGet, "/api/v1/environments", nil, nil, &out, http.StatusOK)
	return out.Environments, err
}

// Rollout returns how far env's latest desired revision has reached.
func (c *Client) Rollout(ctx context.Context, env string) (hub.Rollout, error) {
	var out hub.Rollout
	return out, c.do(ctx, http.MethodGet, "/api/v1/environments/"+url.PathEscape(env)+"/rollout", nil, nil, &out, http.StatusOK)
}

// Source returns env's rollout with what promotion gates need.
func (c *Client) Source(ctx context.Context, env string) (hub.EnvironmentSource, error) {
	var out hub.EnvironmentSource
	return out, c.do(ctx, http.MethodGet, "/api/v1/environments/"+url.PathEscape(env)+"/source", nil, nil, &out, http.StatusOK)
}

// Cluster returns a cluster's state, deployments and recent events.
func (c *Client) Cluster(ctx context.Context, name string) (hub.ClusterDetail, error) {
	var out hub.ClusterDetail
	return out, c.do(ctx, http.MethodGet, "/api/v1/clusters/"+url.PathEscape(name), nil, nil, &out, http.StatusOK)
}

// Diff compares two environments workload by workload.
func (c *Client) Diff(ctx context.Context, from, to string) (hub.EnvDiff, error) {
	var out hub.EnvDiff
	return out, c.do(ctx, http.MethodGet, "/api/v1/diff", url.Values{"from": {from}, "to": {to}}, nil, &out, http.StatusOK)
}

// History returns the events f selects, newest first.
func (c *Client) History(ctx context.Context, f hub.HistoryFilter) ([]hub.Event, error) {
	q := url.Values{}
	for k, v := range map[string]string{"environment": f.Environment, "workload": f.Workload, "clusterType": f.ClusterType,
		"cluster": f.Cluster, "kind": f.Kind, "actor": f.Actor, "group": f.Group, "revision": f.Revision} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !f.Since.IsZero() {
		q.Set("since", f.Since.UTC().Format(time.RFC3339Nano))
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out api.HistoryList
	err := c.do(ctx, http.MethodGet, "/api/v1/history", q, nil, &out, http.StatusOK)
	return out.Events, err
}

// Drift lists env's clusters that are behind, failing, silent or on the wrong folder;
// behind 0 uses the hub's default limit.
func (c *Client) Drift(ctx context.Context, env string, behind time.Duration) (hub.Drift, error) {
	q := url.Values{"environment": {env}}
	if behind > 0 {
		q.Set("behind", behind.String())
	}
	var out hub.Drift
	return out, c.do(ctx, http.MethodGet, "/api/v1/drift", q, nil, &out, http.StatusOK)
}

// Sources returns the git sources fleetform serve polls, by URL and branch.
func (c *Client) Sources(ctx context.Context) ([]hub.SourceState, error) {
	var out api.SourceList
	err := c.do(ctx, http.MethodGet, "/api/v1/sources", nil, nil, &out, http.StatusOK)
	return out.Sources, err
}

// LatestSync returns env's latest sync by fleetform serve; when there is none, the error
// matches hub.ErrNotFound.
func (c *Client) LatestSync(ctx context.Context, env string) (hub.SyncRecord, error) {
	var out hub.SyncRecord
	return out, c.do(ctx, http.MethodGet, "/api/v1/environments/"+url.PathEscape(env)+"/sync", nil, nil, &out, http.StatusOK)
}

// Ready reports whether the hub and its store answer (GET /readyz).
func (c *Client) Ready(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/readyz", nil, nil, nil, http.StatusOK)
}

// WhoAmI asks who the client's token speaks for, with its roles; a query with an action
// also asks whether it may do it.
func (c *Client) WhoAmI(ctx context.Context, ask api.WhoAmIQuery) (api.WhoAmI, error) {
	q := url.Values{}
	if ask.Action != "" {
		q.Set("action", ask.Action)
		q["environment"] = ask.Environments
		q["workspace"] = ask.Workspaces
		q["workload"] = ask.Workloads
		if ask.Platform {
			q.Set("platform", "true")
		}
	}
	var out api.WhoAmI
	err := c.do(ctx, http.MethodGet, "/api/v1/whoami", q, nil, &out, http.StatusOK)
	return out, err
}
