package cli_test

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/hub/client"
)

// TestHubScripts runs the hub's scripts in testdata/hub: `fleetform hub serve` runs as a
// separate process there, so that it can be killed. Scripts see $HUBPORT, a free port, and
// two commands:
//   - waithttp URL: wait (up to 30 s) until GET URL answers 200;
//   - hubreport HUB TOKENFILE CLUSTER REVISION STATUS: post a report with the token in
//     TOKENFILE; it must be acknowledged (202).
func TestHubScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "hub"),
		Setup: func(env *testscript.Env) error {
			port, err := freePort()
			if err != nil {
				return err
			}
			env.Setenv("HUBPORT", strconv.Itoa(port))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waithttp":  waitHTTP,
			"hubreport": hubReport,
		},
	})
}

func freePort() (int, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func waitHTTP(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waithttp URL")
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, args[0], nil)
		ts.Check(err)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not answer 200 within 30s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hubReport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 5 {
		ts.Fatalf("usage: hubreport HUB TOKENFILE CLUSTER REVISION STATUS")
	}
	c, err := client.New(args[0], strings.TrimSpace(ts.ReadFile(args[1])), nil)
	ts.Check(err)
	ts.Check(c.Report(context.Background(), hub.Report{Cluster: args[2], Revision: args[3], Status: hub.ClusterStatus(args[4]),
		ObservedAt: time.Now()}))
}
