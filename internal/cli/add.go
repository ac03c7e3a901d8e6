package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/cli/command"
	"github.com/fleetform/fleetform/internal/fleet"
)

// authoringOptions are the flags of every command that changes the control plane.
type authoringOptions struct {
	cp       controlPlaneOptions
	out      command.Output
	dryRun   bool
	commit   bool
	pr       bool
	author   string
	message  string
	forgeURL string
	// server is fleetform serve's URL (--hub): the change goes through its authoring API.
	server hubOptions
	sig    fleet.Author // set by check
}

func (o *authoringOptions) bind(cmd *cobra.Command, e *env) {
	o.cp.bind(cmd, e, false)
	o.out.Bind(cmd)
	f := cmd.Flags()
	// Authoring writes into one environment: not "every environment", as for the reading commands.
	f.Lookup("env").Usage = "the environment the object is written into (required for cluster types, policies, config values and targets)"
	f.BoolVar(&o.dryRun, "dry-run", false, "validate and plan, print the file diff, write nothing")
	f.BoolVar(&o.commit, "commit", false, "commit the change (on the environment's branch in the Kalypso layout)")
	f.BoolVar(&o.pr, "pr", false, "push a branch to the origin remote and open a pull request (GitHub; token from FLEETFORM_GITHUB_TOKEN or GITHUB_TOKEN)")
	f.StringVar(&o.author, "author", "fleetform <fleetform@localhost>", "commit author, as \"Name <email>\"")
	f.StringVar(&o.message, "message", "", "commit subject (default: names what was done)")
	f.StringVar(&o.forgeURL, "forge-url", "", "API base URL of the forge for --pr (GitHub Enterprise: https://HOST/api/v3/)")
	f.StringVar(&o.server.URL, "hub", "", "send the change to fleetform serve at this URL (token from FLEETFORM_HUB_TOKEN: yours, or your CI job's OIDC token): "+
		"its access policies decide, and it commits, pushes or opens the pull request on its control plane")
}

// check checks the flags shared by the authoring commands.
func (o *authoringOptions) check() error {
	if err := o.out.Check(); err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{o.dryRun, o.commit, o.pr} {
		if b {
			n++
		}
	}
	if n > 1 {
		return command.Usage(errors.New("--dry-run, --commit and --pr exclude each other"))
	}
	if o.server.URL != "" && (o.commit || o.pr) {
		return command.Usage(errors.New("--hub sends the change to fleetform serve, which commits it or opens its pull request as it is set up to: drop --commit and --pr"))
	}
	var err error
	o.sig, err = author(o.author)
	return err
}

func (o *authoringOptions) mode() authoring.Mode {
	switch {
	case o.dryRun:
		return authoring.ModeDryRun
	case o.commit:
		return authoring.ModeCommit
	case o.pr:
		return authoring.ModePR
	}
	return authoring.ModeWrite
}

// labelsFlag parses --label k=v flags.
func labelsFlag(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	ls, err := authoring.ParseLabels(pairs)
	if err != nil {
		return nil, command.Usagef("--label: %w", err)
	}
	return ls, nil
}

// change makes the change and prints what it does.
func (o *authoringOptions) change(ctx context.Context, e *env, ops ...authoring.Operation) error {
	if o.server.URL != "" {
		c, err := o.server.Client()
		if err != nil {
			return err
		}
		res, err := fleet.AuthorThrough(ctx, c, ops, o.dryRun)
		return o.report(e, res, err)
	}
	f, err := o.fleet(e)
	if err != nil {
		return err
	}
	res, err := f.Author(ctx, fleet.AuthorRequest{Operations: ops, Mode: o.mode(), Message: o.message})
	return o.report(e, res, err)
}

// fleet builds the application layer of an authoring command.
func (o *authoringOptions) fleet(e *env) (*fleet.Fleet, error) {
	cfg, err := o.config(e)
	if err != nil {
		return nil, err
	}
	return fleet.New(cfg), nil
}

// config is the application layer's configuration of an authoring command.
func (o *authoringOptions) config(e *env) (fleet.Config, error) {
	o.cp.trusted = append(o.cp.trusted, o.forgeURL)
	cfg, err := o.cp.config(e)
	if err != nil {
		return cfg, err
	}
	cfg.Author, cfg.ForgeURL = o.sig, o.forgeURL
	return cfg, nil
}

// report prints the result of a change and chooses the exit code.
func (o *authoringOptions) report(e *env, res *authoring.Result, err error) error {
	if res == nil {
		if err == nil {
			err = errors.New("no result")
		}
		return err
	}
	printDiagnostics(e.Stderr, res.Warnings) // the control plane's known errors: what the plan cannot see
	if opErr := (*authoring.OperationError)(nil); !errors.As(err, &opErr) {
		printDiagnostics(e.Stderr, res.Errors) // an operation's error is the error printed last
	}
	werr := o.out.Write(e.Stdout, res, func(w io.Writer) error { return authoringText(w, res, o.dryRun, err != nil) })
	if err != nil {
		return err
	}
	return werr
}

// authoringText prints a change's result; after a failed write (failed), the error printed
// after it says what happened, and no line says what was written.
func authoringText(w io.Writer, res *authoring.Result, withDiff, failed bool) error {
	for _, op := range res.Operations {
		fmt.Fprintln(w, op)
	}
	if res.NoChange {
		fmt.Fprintln(w, "no change: the control plane already says that")
		return nil
	}
	for _, f := range res.Files {
		where := f.Path
		if f.Branch != "" {
			where = f.Branch + ":" + f.Path
		}
		fmt.Fprintf(w, "  %-6s %s\n", f.Action, where)
	}
	if withDiff {
		for _, f := range res.Files {
			fmt.Fprint(w, f.Diff)
		}
	}
	for _, p := range res.Plan {
		fmt.Fprintf(w, "%s: %s\n", p.Environment, p.Summary())
		for _, a := range p.AssignmentsAdded {
			fmt.Fprintf(w, "  + %s on %s (namespace %s)\n", a.DeploymentTarget, a.ClusterType, a.Namespace)
		}
		for _, a := range p.AssignmentsRemoved {
			fmt.Fprintf(w, "  - %s on %s (namespace %s)\n", a.DeploymentTarget, a.ClusterType, a.Namespace)
		}
		for _, c := range p.ConfigChanged {
			fmt.Fprintf(w, "  ~ %s on %s: %s: %s -> %s\n", c.DeploymentTarget, c.ClusterType, c.Key, showValue(c.Before), showValue(c.After))
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	switch {
	case !res.Valid:
		fmt.Fprintln(w, "refused: nothing written")
	case res.PullRequest != nil:
		fmt.Fprintf(w, "pull request #%d into %s: %s\n", res.PullRequest.Number, res.PullRequest.Base, res.PullRequest.URL)
	case len(res.Commits) > 0:
		for _, c := range res.Commits {
			fmt.Fprintf(w, "committed %s on %s\n", c.Commit[:min(len(c.Commit), 12)], c.Branch)
		}
	case res.Written:
		fmt.Fprintln(w, "written")
	case !failed:
		fmt.Fprintln(w, "dry run: nothing written")
	}
	return nil
}

func showValue(v any) string {
	if v == nil {
		return "(unset)"
	}
	if _, ok := v.(string); !ok {
		if b, err := json.Marshal(v); err == nil {
			return string(b)
		}
	}
	s := strings.TrimSpace(fmt.Sprint(v))
	if s == "" || strings.ContainsAny(s, " \n") {
		return fmt.Sprintf("%q", s)
	}
	return s
}

func newAddCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use: "add",
		Example: "  fleetform add cluster-type edge --env dev --label region=west\n" +
			"  fleetform add workload shop --workspace retail --label tier=web\n" +
			"  fleetform add policy web-on-edge --env dev --targets tier=web --cluster-types \"region in (west,east)\"",
		Short: "Add an environment, cluster type, workload, deployment target, policy or registration",
		Long: "add writes a new object into the conventional place of the control plane's layout, after\n" +
			"loading and validating the whole control plane with it (an invalid change is refused and\n" +
			"nothing is written), and prints what it does to each environment's fleet.",
	}
	cmd.AddCommand(newAddEnvironmentCmd(e), newAddClusterTypeCmd(e), newAddWorkloadCmd(e), newAddTargetCmd(e),
		newAddPolicyCmd(e), newAddRegistrationCmd(e))
	return cmd
}
