package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/hub"
)

// maxChangeAnswer bounds the answer of a change (its plan and diffs).
const maxChangeAnswer = 64 << 20

// ChangeControlPlane sends operations to fleetform serve's authoring API (POST
// /api/v1/controlplane/changes), which decides them by its access policies and makes them
// on its control plane (with dryRun, only validates and plans them). A refused change (422)
// comes back with its result and an *Error of status 422; any other refusal as an *Error.
func (c *Client) ChangeControlPlane(ctx context.Context, ops []authoring.Operation, dryRun bool) (*authoring.Result, error) {
	const path = "/api/v1/controlplane/changes"
	resp, err := c.send(ctx, http.MethodPost, path, url.Values{"dryRun": {strconv.FormatBool(dryRun)}},
		map[string]any{"operations": ops})
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnprocessableEntity {
		return nil, errorFrom(resp, http.MethodPost, path)
	}
	var res authoring.Result
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxChangeAnswer)).Decode(&res); err != nil {
		return nil, fmt.Errorf("fleetform serve: POST %s: decode the answer: %w", path, err)
	}
	if resp.StatusCode == http.StatusUnprocessableEntity {
		return &res, &Error{Method: http.MethodPost, Path: path, Status: resp.StatusCode, Code: hub.CodeInvalid,
			Message: "the change is refused: its errors are listed"}
	}
	return &res, nil
}
