package controlplane

import (
	"context"
	"fmt"
	"sort"

	"github.com/fleetform/fleetform/internal/repourl"
)

// loadBaseRepos reads the content of the environment's BaseRepos other than main, each in
// its own repository (through the repo map like any repository) at its commit, or at its
// branch when it pins none, as common content of the environment; provenance names the
// repository. One that cannot be read is reported, and every assignment is held back (its
// previous files kept): rendering without its values could ship the wrong configuration.
func (cp *ControlPlane) loadBaseRepos(ctx context.Context, b *builder) {
	bases := b.snap.ExtraBaseRepos
	sort.Slice(bases, func(i, j int) bool { return bases[i].Metadata.Name < bases[j].Metadata.Name })
	for _, br := range bases {
		if err := ctx.Err(); err != nil {
			return
		}
		spec, shown := br.Spec, repourl.Redact(br.Spec.Repo)
		fail := func(field string, err error) {
			b.diag(br.Source.Diag(field, fmt.Sprintf("cannot read the content of BaseRepo %q from %s: %v", br.Metadata.Name, shown, err),
				"check the URL, the commit and the credentials, or map the repository with --repo-map URL=PATH"))
			b.snap.Broken = append(b.snap.Broken, Broken{Kind: "", Name: br.Metadata.Name, Source: br.Source})
		}
		repo, err := cp.repos.Open(ctx, spec.Repo)
		if err != nil {
			fail("spec.repo", err)
			continue
		}
		ref, field := spec.Branch, "spec.branch"
		if spec.Commit != "" {
			ref, field = spec.Commit, "spec.commit"
		}
		tree, err := b.reads.tree(repo, spec.Repo, ref)
		if err != nil {
			fail(field, err)
			continue
		}
		if b.snap.BaseRevisions == nil {
			b.snap.BaseRevisions = map[string]string{}
		}
		b.snap.BaseRevisions[br.Metadata.Name] = tree.Revision()
		docs, diags, err := section{tree: tree, root: spec.Path, repo: shown}.read(ctx)
		if err != nil {
			fail("spec.repo", err)
			continue
		}
		b.snap.Diagnostics = append(b.snap.Diagnostics, diags...)
		for _, d := range docs {
			b.add(d, fromCommon, nil)
		}
	}
}
