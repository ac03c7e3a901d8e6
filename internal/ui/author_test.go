package ui_test

import (
	"context"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/fleetform/fleetform/internal/access"
	"github.com/fleetform/fleetform/internal/authoring"
	"github.com/fleetform/fleetform/internal/controlplane"
	"github.com/fleetform/fleetform/internal/forge"
	"github.com/fleetform/fleetform/internal/testutil/gittest"
)

// controlPlane is a real control plane (a git repository made by fleetform init) that the
// authoring pages change through authoring.Apply, as serve does.
type controlPlane struct {
	dir string
}

func newControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "platform")
	_, err := authoring.Init(context.Background(), authoring.InitOptions{Dir: dir, Layout: controlplane.LayoutFolder,
		Environments: []string{"dev", "stage", "prod"}, Author: object.Signature{Name: "test", Email: "test@localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	return &controlPlane{dir: dir}
}

// Change commits (or plans) the operations on the control plane's branch.
func (c *controlPlane) Change(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error) {
	actor := id.Token
	mode := authoring.ModeCommit
	if dryRun {
		mode = authoring.ModeDryRun
	}
	return authoring.Apply(ctx, authoring.Request{ControlPlane: c.dir, Operations: ops, Mode: mode, Actor: actor,
		Author: object.Signature{Name: "fleetform", Email: "fleetform@localhost"}})
}

// git runs git in the control plane and returns its output.
func (c *controlPlane) git(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "git", append([]string{"-C", c.dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// authoringAsAdmin is a fleet whose UI authors on a new control plane, with the admin signed
// in on the client returned.
func authoringAsAdmin(t *testing.T) (*fleet, *controlPlane, *http.Client) {
	t.Helper()
	f := newFleet(t)
	cp := newControlPlane(t)
	f.web.SetChanges(cp)
	c := client(t)
	f.signIn(t, c, adminToken)
	return f, cp, c
}

func clusterTypeForm(csrf, name string) url.Values {
	return url.Values{"csrf": {csrf}, "form": {"cluster-type"}, "name": {name}, "env": {"dev"}, "labels": {"region=east, size=large"}}
}

func TestAuthoringFormsPreviewThenCommit(t *testing.T) {
	f, cp, c := authoringAsAdmin(t)
	status, page, _ := f.get(t, c, "/author", "")
	if status != http.StatusOK || !strings.Contains(page, `id="form-policy"`) {
		t.Fatalf("GET /author: %d", status)
	}
	csrf := csrfOf(t, page)
	head := cp.git(t.Context(), t, "rev-parse", "HEAD")

	status, body, _ := f.post(t, c, "/author/preview", clusterTypeForm(csrf, "edge-east"))
	if status != http.StatusOK || !strings.Contains(body, "add ClusterType edge-east in dev") ||
		!strings.Contains(body, "environments/dev/cluster-types/edge-east.yaml") || !strings.Contains(body, `action="/author/commit"`) {
		t.Fatalf("preview: %d\n%s", status, body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") != head || cp.git(t.Context(), t, "status", "--porcelain") != "" {
		t.Fatal("a preview changed the control plane")
	}

	status, body, _ = f.post(t, c, "/author/commit", clusterTypeForm(csrf, "edge-east"))
	if status != http.StatusOK || !strings.Contains(body, "Committed") {
		t.Fatalf("commit: %d\n%s", status, body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") == head {
		t.Fatal("no commit")
	}
	if got := cp.git(t.Context(), t, "show", "HEAD:environments/dev/cluster-types/edge-east.yaml"); !strings.Contains(got, "region: east") {
		t.Fatalf("the committed cluster type:\n%s", got)
	}

	// A policy from the selector builder's rows.
	policy := url.Values{"csrf": {csrf}, "form": {"policy"}, "name": {"east-tests"}, "env": {"dev"},
		"targets_key_0": {"purpose"}, "targets_op_0": {"="}, "targets_values_0": {"test"},
		"types_key_0": {"region"}, "types_op_0": {"in"}, "types_values_0": {"east,west"},
		"types_key_1": {"legacy"}, "types_op_1": {"!exists"}}
	status, body, _ = f.post(t, c, "/author/preview", policy)
	if status != http.StatusOK || !strings.Contains(body, "operator: In") || !strings.Contains(body, "operator: DoesNotExist") {
		t.Fatalf("policy preview: %d\n%s", status, body)
	}
}

func TestAuthoringRefusesInvalidChangesAndReaders(t *testing.T) {
	f, cp, c := authoringAsAdmin(t)
	_, page, _ := f.get(t, c, "/author", "")
	csrf := csrfOf(t, page)
	head := cp.git(t.Context(), t, "rev-parse", "HEAD")
	status, body, _ := f.post(t, c, "/author/commit", clusterTypeForm(csrf, "Not_DNS"))
	if status != http.StatusUnprocessableEntity && status != http.StatusBadRequest {
		t.Fatalf("an invalid name: %d, want 422 or 400\n%s", status, body)
	}
	if !strings.Contains(body, "Not_DNS") || strings.Contains(body, `action="/author/commit"`) {
		t.Fatalf("the refusal does not name the problem, or offers to commit:\n%s", body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") != head || cp.git(t.Context(), t, "status", "--porcelain") != "" {
		t.Fatal("a refused change touched the control plane")
	}
	if status, _, _ := f.post(t, c, "/author/commit", clusterTypeForm("", "edge")); status != http.StatusForbidden {
		t.Fatalf("without CSRF: %d, want 403", status)
	}

	reader := client(t)
	f.signIn(t, reader, f.readToken)
	// The refusal gives the access policies' reason: who may not do what.
	const why = "token viewer may not author: the control plane has no AccessPolicy"
	if status, body, _ := f.get(t, reader, "/author", ""); status != http.StatusForbidden || !strings.Contains(body, why) {
		t.Fatalf("a reader on /author: %d, want 403 saying %q\n%s", status, why, body)
	}
	_, page, _ = f.get(t, reader, "/", "")
	if strings.Contains(page, `href="/author"`) {
		t.Fatal("a reader sees the link to change the platform")
	}
	if status, body, _ := f.post(t, reader, "/author/commit", clusterTypeForm(csrfOf(t, page), "edge")); status != http.StatusForbidden ||
		!strings.Contains(body, why) {
		t.Fatalf("a reader's commit: %d, want 403 saying %q\n%s", status, why, body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") != head {
		t.Fatal("a reader changed the control plane")
	}
}

// proposingControlPlane judges changes as serve does without a policy (only the admin token
// may make them) and takes proposals from anyone, as pull requests.
type proposingControlPlane struct {
	*controlPlane
	proposed []access.Identity
}

func (p *proposingControlPlane) Change(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error) {
	if d := access.Compile(nil).Decide(id, access.Request{Action: "author", Platform: true}); !d.Allowed {
		return nil, d.Err()
	}
	return p.controlPlane.Change(ctx, ops, dryRun, id)
}

func (p *proposingControlPlane) CanPropose() bool { return true }

func (p *proposingControlPlane) Propose(ctx context.Context, ops []authoring.Operation, dryRun bool, id access.Identity) (*authoring.Result, error) {
	res, err := authoring.Apply(ctx, authoring.Request{ControlPlane: p.dir, Operations: ops, Mode: authoring.ModeDryRun})
	if err != nil || dryRun {
		return res, err
	}
	p.proposed = append(p.proposed, id)
	res.PullRequest = &forge.PullRequest{Number: 7, URL: "https://github.com/org/platform/pull/7"}
	res.Written = true
	return res, nil
}

// TestReadersProposeAsPullRequests: someone who may not change the platform is offered the
// Change pages to propose a change as a pull request; the preview says so and confirms
// into a proposal, not a commit.
func TestReadersProposeAsPullRequests(t *testing.T) {
	f := newFleet(t)
	cp := &proposingControlPlane{controlPlane: newControlPlane(t)}
	f.web.SetChanges(cp)
	c := client(t)
	f.signIn(t, c, f.readToken)
	status, page, _ := f.get(t, c, "/author", "")
	if status != http.StatusOK || !strings.Contains(page, `id="propose-only"`) || !strings.Contains(page, `href="/author"`) {
		t.Fatalf("GET /author as a reader: %d\n%s", status, page)
	}
	csrf := csrfOf(t, page)
	head := cp.git(t.Context(), t, "rev-parse", "HEAD")
	status, body, _ := f.post(t, c, "/author/preview", clusterTypeForm(csrf, "edge-east"))
	if status != http.StatusOK || !strings.Contains(body, `action="/author/propose"`) || !strings.Contains(body, "Propose as a pull request") ||
		strings.Contains(body, `action="/author/commit"`) {
		t.Fatalf("preview as a reader: %d\n%s", status, body)
	}
	status, body, _ = f.post(t, c, "/author/propose", clusterTypeForm(csrf, "edge-east"))
	if status != http.StatusOK || !strings.Contains(body, "Pull request opened") || len(cp.proposed) != 1 || cp.proposed[0].Token != "viewer" {
		t.Fatalf("propose: %d %v\n%s", status, cp.proposed, body)
	}
	if cp.git(t.Context(), t, "rev-parse", "HEAD") != head {
		t.Fatal("a proposal committed")
	}
	// Committing directly is still refused.
	if status, _, _ := f.post(t, c, "/author/commit", clusterTypeForm(csrf, "edge-east")); status != http.StatusForbidden {
		t.Fatalf("a reader's commit: %d", status)
	}
}

// TestRefusedFormKeepsItsInput: a refused change shows the forms again with the refused one
// as it was filled in (text, selects, textareas) and why it was refused next to it; the
// other forms stay empty, and nothing is written.
func TestRefusedFormKeepsItsInput(t *testing.T) {
	f, _, c := authoringAsAdmin(t)
	_, page, _ := f.get(t, c, "/author", "")
	csrf := csrfOf(t, page)
	policy := url.Values{"csrf": {csrf}, "form": {"policy"}, "name": {"east-tests"}, "env": {"stage"}, "workspace": {"retail"},
		"targets_key_0": {"purpose"}, "targets_op_0": {"notin"}, "targets_values_0": {"test"},
		"types_text": {"region in (east,"}}
	status, body, _ := f.post(t, c, "/author/preview", policy)
	if status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
		t.Fatalf("an invalid selector: %d, want 400 or 422\n%s", status, body)
	}
	form := body[strings.Index(body, `id="form-policy"`):]
	form = form[:strings.Index(form, "</form>")]
	for _, want := range []string{`data-status="refused"`, "region in (east,", `value="east-tests"`, `value="retail"`,
		`value="purpose"`, `<option selected>notin</option>`, `value="test"`, `<option selected>stage</option>`} {
		if !strings.Contains(form, want) {
			t.Errorf("the refused form lacks %s:\n%s", want, form)
		}
	}
	workload := body[strings.Index(body, `id="form-workload"`):]
	workload = workload[:strings.Index(workload, "</form>")]
	if strings.Contains(workload, "east-tests") || strings.Contains(workload, "refused") {
		t.Errorf("another form shows the refused one's input:\n%s", workload)
	}
	config := url.Values{"csrf": {csrf}, "form": {"config"}, "env": {"dev"}, "level": {"workload"}, "at": {"no-such-workload"},
		"key": {"LOG_LEVEL"}, "value": {"- a\n- b"}}
	status, body, _ = f.post(t, c, "/author/preview", config)
	form = body[strings.Index(body, `id="form-config"`):]
	form = form[:strings.Index(form, "</form>")]
	if status == http.StatusOK || !strings.Contains(form, `value="no-such-workload"`) || !strings.Contains(form, "- a\n- b</textarea>") ||
		!strings.Contains(form, `<option value="workload" selected>`) {
		t.Errorf("a refused config form: %d\n%s", status, form)
	}
}

// TestAuthoringFormsChangeAndRemove: the Change page edits and removes, not only adds: an
// object's labels, a config value unset, a workload repository registered, a cluster type
// removed; each previewed, then committed.
func TestAuthoringFormsChangeAndRemove(t *testing.T) {
	f, cp, c := authoringAsAdmin(t)
	_, page, _ := f.get(t, c, "/author", "")
	for _, id := range []string{"form-unset-config", "form-registration", "form-labels", "form-remove"} {
		if !strings.Contains(page, `id="`+id+`"`) {
			t.Errorf("the Change page has no %s", id)
		}
	}
	csrf := csrfOf(t, page)
	commit := func(form url.Values, preview string) {
		t.Helper()
		status, body, _ := f.post(t, c, "/author/preview", form)
		if status != http.StatusOK || !strings.Contains(body, preview) {
			t.Fatalf("preview of %s: %d, want %q\n%s", form.Get("form"), status, preview, body)
		}
		if status, body, _ := f.post(t, c, "/author/commit", form); status != http.StatusOK || !strings.Contains(body, "Committed") {
			t.Fatalf("commit of %s: %d\n%s", form.Get("form"), status, body)
		}
	}
	commit(clusterTypeForm(csrf, "edge-east"), "add ClusterType edge-east in dev")
	commit(url.Values{"csrf": {csrf}, "form": {"labels"}, "kind": {"cluster-type"}, "name": {"edge-east"}, "env": {"dev"},
		"labels": {"region=east, size=small"}}, "set ClusterType edge-east in dev")
	if got := cp.git(t.Context(), t, "show", "HEAD:environments/dev/cluster-types/edge-east.yaml"); !strings.Contains(got, "size: small") {
		t.Errorf("the relabelled cluster type:\n%s", got)
	}
	commit(url.Values{"csrf": {csrf}, "form": {"config"}, "env": {"dev"}, "level": {"cluster-type"}, "at": {"edge-east"},
		"key": {"LOG_LEVEL"}, "value": {"debug"}}, "LOG_LEVEL")
	commit(url.Values{"csrf": {csrf}, "form": {"unset-config"}, "env": {"dev"}, "level": {"cluster-type"}, "at": {"edge-east"},
		"key": {"LOG_LEVEL"}}, "unset")
	apps := gittest.NewBare(t)
	apps.Commit(t, "main", map[string]string{"shop.yaml": "apiVersion: scheduler.kalypso.io/v1alpha1\nkind: Workload\nmetadata: {name: shop}\nspec: {deploymentTargets: []}\n"})
	commit(url.Values{"csrf": {csrf}, "form": {"registration"}, "name": {"shop-apps"}, "repo": {apps.Dir},
		"branch": {"main"}, "path": {"."}, "workspace": {"shop"}}, "add WorkloadRegistration shop-apps")
	commit(url.Values{"csrf": {csrf}, "form": {"remove"}, "kind": {"cluster-type"}, "name": {"edge-east"}, "env": {"dev"}},
		"remove ClusterType edge-east in dev")
	if files := cp.git(t.Context(), t, "ls-tree", "-r", "--name-only", "HEAD"); strings.Contains(files, "edge-east.yaml") ||
		!strings.Contains(files, "shop-apps") {
		t.Errorf("the control plane after the changes:\n%s", files)
	}
}

// withEdgeEast is a fleet whose UI authors on a control plane, an admin signed in, and the
// cluster type edge-east (region=east, size=large) added in dev; it returns the client and
// its CSRF token.
func withEdgeEast(t *testing.T) (*fleet, *http.Client, string) {
	t.Helper()
	f, cp, c := authoringAsAdmin(t)
	f.web.SetScheduler(cp)
	_, page, _ := f.get(t, c, "/author", "")
	csrf := csrfOf(t, page)
	if status, body, _ := f.post(t, c, "/author/commit", clusterTypeForm(csrf, "edge-east")); status != http.StatusOK {
		t.Fatalf("commit: %d\n%s", status, body)
	}
	return f, c, csrf
}

// TestLabelsFormPrefilled: the cluster type page links to the labels form filled with the
// cluster type's current labels (read from the control plane), not shown as a refusal.
func TestLabelsFormPrefilled(t *testing.T) {
	f, c, _ := withEdgeEast(t)
	status, body, _ := f.get(t, c, "/author?edit=labels&kind=cluster-type&env=dev&name=edge-east", "")
	form := regexp.MustCompile(`(?s)<form[^>]*id="form-labels".*?</form>`).FindString(body)
	if status != http.StatusOK || !strings.Contains(form, `name="labels" value="region=east, size=large"`) ||
		!strings.Contains(form, `name="name" value="edge-east"`) || strings.Contains(form, `data-status="refused"`) {
		t.Fatalf("the labels form is not filled with edge-east's labels: %d\n%s", status, form)
	}
	if _, ct, _ := f.get(t, c, "/cluster-types/dev/large", ""); !strings.Contains(ct, `/author?edit=labels&amp;kind=cluster-type&amp;env=dev&amp;name=large#form-labels`) {
		t.Errorf("the cluster type page does not link to its labels form:\n%s", ct)
	}
}

// TestEditFormsPrefilled: links to the config, unset-config and remove forms fill them with
// the object they name, the config value read from the control plane (not from the link);
// a form that does not exist is a clear error; the pages link to their objects' forms.
func TestEditFormsPrefilled(t *testing.T) {
	f, c, csrf := withEdgeEast(t)
	if status, body, _ := f.post(t, c, "/author/commit", url.Values{"csrf": {csrf}, "form": {"config"}, "env": {"dev"},
		"level": {"cluster-type"}, "at": {"edge-east"}, "key": {"LOG_LEVEL"}, "value": {"debug"}}); status != http.StatusOK {
		t.Fatalf("commit of the config value: %d\n%s", status, body)
	}
	formOf := func(body, id string) string {
		return regexp.MustCompile(`(?s)<form[^>]*id="form-` + id + `".*?</form>`).FindString(body)
	}
	_, body, _ := f.get(t, c, "/author?edit=config&env=dev&level=cluster-type&at=edge-east&key=LOG_LEVEL&value=typed-in-the-link", "")
	if form := formOf(body, "config"); !strings.Contains(form, `<textarea name="value" rows="3">debug</textarea>`) ||
		!strings.Contains(form, `name="at" value="edge-east"`) || !strings.Contains(form, `name="key" value="LOG_LEVEL"`) ||
		!strings.Contains(form, `<option value="cluster-type" selected>`) || strings.Contains(form, `data-status="refused"`) {
		t.Errorf("the config form is not filled with edge-east's LOG_LEVEL:\n%s", form)
	}
	_, body, _ = f.get(t, c, "/author?edit=unset-config&env=dev&level=cluster-type&at=edge-east&key=LOG_LEVEL", "")
	if form := formOf(body, "unset-config"); !strings.Contains(form, `name="at" value="edge-east"`) || !strings.Contains(form, `name="key" value="LOG_LEVEL"`) {
		t.Errorf("the unset-config form is not filled:\n%s", form)
	}
	_, body, _ = f.get(t, c, "/author?edit=remove&kind=workload&name=shop", "")
	if form := formOf(body, "remove"); !strings.Contains(form, `<option selected>workload</option>`) || !strings.Contains(form, `name="name" value="shop"`) {
		t.Errorf("the remove form is not filled:\n%s", form)
	}
	if status, body, _ := f.get(t, c, "/author?edit=workloads", ""); status != http.StatusBadRequest || !strings.Contains(body, "edit=workloads: no such form") {
		t.Errorf("an unknown form to edit: %d\n%s", status, body)
	}
	if _, ct, _ := f.get(t, c, "/cluster-types/dev/large", ""); !strings.Contains(ct, `/author?edit=remove&amp;kind=cluster-type&amp;env=dev&amp;name=large#form-remove`) {
		t.Errorf("the cluster type page does not link to its remove form:\n%s", ct)
	}
}
