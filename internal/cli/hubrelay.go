package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/serve"
)

type hubRelayOptions struct {
	hub             hubOptions
	addr            string
	maxBatch        int
	senders         int
	timeout         time.Duration
	tlsCert, tlsKey string
	shutdownTimeout time.Duration
}

func newHubRelayCmd(e *env) *cobra.Command {
	var o hubRelayOptions
	cmd := &cobra.Command{
		Use: "relay",
		Example: "  # at a site: its agents use --hub http://relay.plant-7.local:8081\n" +
			"  FLEETFORM_HUB_TOKEN=\"$(cat relay-token)\" fleetform hub relay --hub https://hub.example.com --addr 0.0.0.0:8081",
		Short: "Forward a site's cluster reports to the hub in batches",
		Long: "relay takes the reports of a site's agents (POST /api/v1/reports, each with its cluster's\n" +
			"own token, exactly as the hub takes them) and forwards whatever is waiting to --hub in one\n" +
			"request (POST /api/v1/reports/batch), up to --max-batch reports, with --senders batches in\n" +
			"flight. Each agent hears what the hub answered for its report: 202 once it is durable, the\n" +
			"hub's error otherwise, 502 when the batch did not reach the hub (the agent retries). The\n" +
			"hub authenticates every report by its cluster's token; " + command.HubTokenEnv + " is a relay\n" +
			"token (`hub token create NAME --kind relay`), which can do nothing but forward. SIGINT or\n" +
			"SIGTERM stops accepting reports and answers the ones in flight.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.check(); err != nil {
				return err
			}
			return o.run(cmd.Context(), e)
		},
	}
	o.hub.BindRequired(cmd)
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8081", "address the agents post to, HOST:PORT (port 0: any free port)")
	f.IntVar(&o.maxBatch, "max-batch", serve.RelayMaxBatch, fmt.Sprintf("most reports per batch (at most %d)", hub.MaxReportsPerBatch))
	f.IntVar(&o.senders, "senders", serve.RelaySenders, "batches in flight to the hub at once")
	f.DurationVar(&o.timeout, "timeout", serve.RelayTimeout, "how long a batch may take before its agents hear 502")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve the agents HTTPS with this certificate (PEM; with --tls-key)")
	f.StringVar(&o.tlsKey, "tls-key", "", "private key of --tls-cert (PEM)")
	f.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long a stop waits for the reports in flight")
	return cmd
}

func (o *hubRelayOptions) check() error {
	switch {
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return command.Usage(errors.New("--tls-cert and --tls-key go together"))
	case o.maxBatch < 1 || o.maxBatch > hub.MaxReportsPerBatch:
		return command.Usagef("--max-batch must be 1 to %d", hub.MaxReportsPerBatch)
	case o.senders < 1 || o.timeout <= 0 || o.shutdownTimeout <= 0:
		return command.Usage(errors.New("--senders, --timeout and --shutdown-timeout must be positive"))
	}
	return nil
}

func (o *hubRelayOptions) run(ctx context.Context, e *env) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := o.hub.ClientWith(&http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment,
		MaxIdleConns: o.senders, MaxIdleConnsPerHost: o.senders, IdleConnTimeout: time.Minute}})
	if err != nil {
		return err
	}
	return serve.Relay(ctx, serve.RelayConfig{Addr: o.addr, Hub: c, HubURL: o.hub.URL,
		MaxBatch: o.maxBatch, Senders: o.senders, Timeout: o.timeout,
		TLSCert: o.tlsCert, TLSKey: o.tlsKey, ShutdownTimeout: o.shutdownTimeout, Out: e.Stderr, Logger: e.Logger})
}
