package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

// A push that changes an input of dev (a comment in its kustomization)
// without changing what it renders makes no commit, though every
// resource's strata.dev/source-commit annotation would name the new
// commit: the record, and the repository page, move to it. The next push
// that changes a manifest makes one commit whose trailers name it.
func TestHydrateNoCommitWhenOnlyTheSourceCommitChanges(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = syncsConfig
	e := startSyncs(t, apptest.Options{Local: true}, files)

	first := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(4)}, "Scale to 4")
	if cr := e.completed(first, devHydrate); cr.Conclusion != "success" || !strings.Contains(cr.Title, "changed") {
		t.Fatalf("push 1: %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	hydrated := e.Repo.Branch("hydrated")

	kustomization := files["deploy/overlays/dev/kustomization.yaml"] + "# scaled by the platform team\n"
	second := e.push(map[string]string{"deploy/overlays/dev/kustomization.yaml": kustomization}, "Explain the overlay")
	cr := e.completed(second, devHydrate)
	if cr.Conclusion != "success" || cr.Title != "No changes" ||
		!strings.Contains(cr.Summary, "the same as `hydrated:dev` holds from "+first[:7]+" but for the source commit they name") {
		t.Fatalf("push 2: %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if now := e.Repo.Branch("hydrated"); now != hydrated {
		t.Fatalf("push 2 changed no manifest but committed %s", now)
	}
	// The files hydrated keep naming push 1: the annotation lags, the record does not.
	if dep := e.hydrated("dev")["deployment_dev_api.yaml"]; !strings.Contains(dep, "strata.dev/source-commit: '"+first+"'") {
		t.Errorf("the destination's deployment changed:\n%s", dep)
	}
	h, err := e.Server.Store().SyncHydration(t.Context(), "acme/infra", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if h.SourceCommit != second || h.DestCommit != hydrated {
		t.Errorf("record: source %s, dest %s; want source %s (push 2), dest %s (push 1's commit)", h.SourceCommit, h.DestCommit, second, hydrated)
	}
	e.Repo.SetPermission("wanda", "write")
	wanda := uiLogin(t, e.Env, "wanda")
	_, page := fetchPage(t, wanda, e.Config.PublicURL+"/repos/acme/infra")
	row := between(page, `<tr data-sync="dev">`, "</tr>")
	for _, want := range []string{`/commit/` + second + `"><code>` + second[:7] + `</code>`, `/commit/` + hydrated + `"><code>` + hydrated[:7] + `</code>`} {
		if !strings.Contains(row, want) {
			t.Errorf("the repository page's dev row lacks %q:\n%s", want, row)
		}
	}

	third := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(5)}, "Scale to 5")
	if cr := e.completed(third, devHydrate); cr.Conclusion != "success" || cr.Title != "5 resources, 6 files changed" {
		t.Fatalf("push 3: %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	tip := e.Repo.Branch("hydrated")
	if tip == hydrated || e.parent(tip) != hydrated {
		t.Fatalf("push 3: hydrated moved from %s to %s (parent %s), want one commit", hydrated, tip, e.parent(tip))
	}
	msg := e.gitCommit(tip).GetMessage()
	if !strings.HasSuffix(msg, "\n\nStrata-Source-Commit: "+third+"\nStrata-Sync: dev\nStrata-Source-Repo: acme/infra\n") {
		t.Errorf("push 3's commit message:\n%s", msg)
	}
	if dep := e.hydrated("dev")["deployment_dev_api.yaml"]; !strings.Contains(dep, "replicas: 5") || !strings.Contains(dep, "strata.dev/source-commit: '"+third+"'") {
		t.Errorf("push 3's deployment:\n%s", dep)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// Two pushes that only reword dev's kustomization, hydrated out of order
// (the later push's event first): neither commits, and the record stays at
// the later commit instead of going back to the earlier one.
func TestHydrateNoCommitOutOfOrderKeepsTheLaterRecord(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = syncsConfig
	e := startSyncs(t, apptest.Options{}, files)
	first := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(4)}, "Scale to 4")
	e.completed(first, devHydrate)
	hydrated := e.Repo.Branch("hydrated")

	base := files["deploy/overlays/dev/kustomization.yaml"]
	earlier := e.Repo.Commit("main", map[string]string{"deploy/overlays/dev/kustomization.yaml": base + "# one\n"}, "Reword once")
	later := e.Repo.Commit("main", map[string]string{"deploy/overlays/dev/kustomization.yaml": base + "# two\n"}, "Reword twice")
	e.Deliver(e.Repo.PushEvent("main", earlier, later))
	if cr := e.completed(later, devHydrate); cr.Title != "No changes" {
		t.Fatalf("the later push: %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.Deliver(e.Repo.PushEvent("main", first, earlier))
	cr := e.completed(earlier, devHydrate)
	if cr.Title != "No changes" || !strings.Contains(cr.Summary, "The record of the latest source commit hydrated stays at "+later[:7]) {
		t.Fatalf("the earlier push: %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	h, err := e.Server.Store().SyncHydration(t.Context(), "acme/infra", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if h.SourceCommit != later || h.DestCommit != hydrated || e.Repo.Branch("hydrated") != hydrated {
		t.Errorf("record: source %s, dest %s, branch at %s; want source %s (the later push), dest and branch %s", h.SourceCommit, h.DestCommit, e.Repo.Branch("hydrated"), later, hydrated)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}
