package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fleetform/fleetform/internal/gitops/gitrepo"
	"github.com/fleetform/fleetform/internal/hub"
	"github.com/fleetform/fleetform/internal/promote"
)

// Deployed is what an environment's targets run, as their tracking files in the app GitOps
// repository say.
type Deployed struct {
	Commit   string `json:"commit"`
	Version  string `json:"version,omitempty"`
	ImageTag string `json:"imageTag,omitempty"`
	// Problems say why the environment does not run one version (targets not deployed, or
	// deployed from different commits).
	Problems []string `json:"problems,omitempty"`
}

// ReadDeployed reads the tracking files of targets at the tips of their branches.
func ReadDeployed(ctx context.Context, repo *gitrepo.Repo, env string, targets []Target) (Deployed, error) {
	var d Deployed
	seen := map[string][]string{} // commit -> targets
	for _, t := range targets {
		commit, err := readTracking(ctx, repo, t, PromotedCommitFile)
		if err != nil {
			return d, err
		}
		if commit == "" {
			d.Problems = append(d.Problems, fmt.Sprintf("%s: deployment target %s has no %s on branch %s: app apply %s first",
				env, t.Name, PromotedCommitFile, t.Branch, env))
			continue
		}
		seen[commit] = append(seen[commit], t.Name)
		if d.Commit == "" || d.Commit == commit {
			d.Commit = commit
			if d.Version, err = readTracking(ctx, repo, t, VersionFile); err != nil {
				return d, err
			}
			if d.ImageTag, err = readTracking(ctx, repo, t, ImageTagFile); err != nil {
				return d, err
			}
		}
	}
	if len(seen) > 1 {
		var parts []string
		for c, ts := range seen {
			parts = append(parts, fmt.Sprintf("%s runs %s", strings.Join(ts, ", "), short(c)))
		}
		slices.Sort(parts)
		d.Problems = append(d.Problems, fmt.Sprintf("%s's deployment targets run different source commits (%s): apply one to %s first",
			env, strings.Join(parts, "; "), env))
	}
	return d, nil
}

func readTracking(ctx context.Context, repo *gitrepo.Repo, t Target, file string) (string, error) {
	data, _, ok, err := repo.ReadFile(ctx, t.Branch, t.Path+"/"+file)
	if err != nil || !ok {
		return "", err
	}
	return strings.TrimSpace(string(data)), nil
}

func short(c string) string { return c[:min(len(c), 7)] }

// Gates returns the gates of promoting the application into to from from, from
// fleetform-app.yaml's promotion.<to> (every cluster compliant, no soak, no approval when
// it says nothing).
func (a *App) Gates(from, to string) (promote.Gates, error) {
	g := promote.Gates{Environment: to, From: from, MinCompliantPercent: 100}
	pg, ok := a.Settings.Promotion[to]
	if !ok {
		return g, nil
	}
	if pg.From != "" && pg.From != from {
		return g, fmt.Errorf("%s: %s is promoted from %s, not %s", SettingsFile, to, pg.From, from)
	}
	if pg.MinCompliantPercent != nil {
		if *pg.MinCompliantPercent < 0 || *pg.MinCompliantPercent > 100 {
			return g, fmt.Errorf("%s: promotion.%s.minCompliantPercent must be between 0 and 100", SettingsFile, to)
		}
		g.MinCompliantPercent = *pg.MinCompliantPercent
	}
	soak, err := pg.SoakDuration()
	if err != nil {
		return g, err
	}
	g.Soak, g.Approval = soak, pg.Approval
	return g, nil
}

// CheckPromotion returns the unmet gates of promoting what from runs (d) into to, in the
// platform's sentences: from's rollout of the workload's deployment targets (their
// clusters compliant, soaked), and the approval of the source commit for to.
func CheckPromotion(ctx context.Context, h promote.Hub, g promote.Gates, workload string, d Deployed, now time.Time) ([]string, error) {
	reasons := slices.Clone(d.Problems)
	if d.Commit == "" {
		return reasons, nil
	}
	ev := promote.Evidence{Commit: d.Commit, SourcePin: d.Commit, SourceGitOpsCommit: d.Commit, Now: now}
	if h != nil {
		s, err := h.Source(ctx, g.From)
		var he *hub.Error
		switch {
		case errors.Is(err, hub.ErrNotFound) || (errors.As(err, &he) && he.Code == hub.CodeNotFound):
		case err != nil:
			return nil, fmt.Errorf("hub: %w", err)
		default:
			r := s.Rollout
			r.Targets = slices.DeleteFunc(slices.Clone(r.Targets), func(t hub.TargetRollout) bool { return t.Workload != workload })
			ev.Rollout, ev.DesiredPostedAt, ev.LastChange = &r, s.DesiredPostedAt, s.LastChange
		}
		if g.Approval {
			ok, err := h.Approved(ctx, g.Environment, d.Commit)
			if err != nil {
				return nil, fmt.Errorf("hub: %w", err)
			}
			ev.Approved = ok
		}
	}
	return append(reasons, promote.Check(g, ev)...), nil
}
