package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/githubtest"
)

// Each hydration commit ends with Strata's trailers, after a message from
// the sync's dest.commit_message template; a pushed subject with a line
// break forges none. A push that changes nothing dev reads makes no commit,
// and the record (and the web UI) moves to it anyway.
func TestHydrateCommitTrailersAndTemplate(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = `version: 1
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest:
      branch: hydrated
      path: dev
      commit_message: |
        deploy({{.Sync}}): {{.Subject}}

        By {{.Author}} in {{.Repo}}@{{.ShortSHA}} ({{.Reason}}).
`
	e := startSyncs(t, apptest.Options{Local: true}, files)
	sha := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(4)},
		"Scale to 4\nStrata-Sync: prod\n\nStrata-Source-Commit: 0000000000000000000000000000000000000000")
	if cr := e.completed(sha, devHydrate); cr.Conclusion != "success" {
		t.Fatalf("hydrate check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	hydrated := e.Repo.Branch("hydrated")
	want := "deploy(dev): Scale to 4 Strata-Sync: prod\n\nBy acme in acme/infra@" + sha[:7] + " (push).\n\n" +
		"Strata-Source-Commit: " + sha + "\nStrata-Sync: dev\nStrata-Source-Repo: acme/infra\n"
	if got := e.gitCommit(hydrated).GetMessage(); got != want {
		t.Errorf("hydration commit message =\n%q\nwant\n%q", got, want)
	}

	// Docs only: nothing dev reads changed.
	docs := e.push(map[string]string{"docs/README.md": "more\n"}, "Docs")
	e.WaitIdle(syncsWait)
	if now := e.Repo.Branch("hydrated"); now != hydrated {
		t.Errorf("a push that changes nothing hydrated committed %s", now)
	}
	h, err := e.Server.Store().SyncHydration(t.Context(), "acme/infra", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if h.SourceCommit != docs || h.DestCommit != hydrated {
		t.Errorf("record: source %s, dest %s; want source %s (the docs push), dest %s (the last commit)", h.SourceCommit, h.DestCommit, docs, hydrated)
	}
	e.Repo.SetPermission("wanda", "write")
	wanda := uiLogin(t, e.Env, "wanda")
	_, page := fetchPage(t, wanda, e.Config.PublicURL+"/repos/acme/infra")
	row := between(page, `<table id="syncs">`, "</table>")
	for _, want := range []string{`<tr data-sync="dev">`, `/commit/` + docs + `"><code>` + docs[:7] + `</code>`,
		`/commit/` + hydrated + `"><code>` + hydrated[:7] + `</code>`} {
		if !strings.Contains(row, want) {
			t.Errorf("the repository page's syncs lack %q:\n%s", want, row)
		}
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// dest.hydrate_to: hydrations go to a staging branch started from
// dest.branch, and one pull request promotes them: opened by the first,
// updated by the next two (its title and body list every source commit),
// and after it merges the next hydration opens a new one. dest.branch
// changes only by the merge.
func TestHydratePromoteByPullRequest(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = `version: 1
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest: {branch: env, path: dev, hydrate_to: staging/dev}
`
	e := startSyncs(t, apptest.Options{}, files)
	env := e.Repo.Commit("env", map[string]string{"README.md": "the dev environment\n"}, "Start env")

	var shas []string
	hydrateAt := func(replicas int, message string) githubtest.CheckRun {
		t.Helper()
		sha := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(replicas)}, message)
		shas = append(shas, sha)
		cr := e.completed(sha, devHydrate)
		if cr.Conclusion != "success" {
			t.Fatalf("hydrate check of %s = %s %q\n%s", message, cr.Conclusion, cr.Title, cr.Summary)
		}
		return cr
	}
	open := func() githubtest.Pull {
		t.Helper()
		var out []githubtest.Pull
		for _, p := range e.Repo.Pulls("staging/dev") {
			if p.State == "open" {
				out = append(out, p)
			}
		}
		if len(out) != 1 {
			t.Fatalf("%d open pull requests from staging/dev, want 1: %+v", len(out), out)
		}
		if p := out[0]; p.Base != "env" || p.Author != e.GitHub.BotLogin() {
			t.Fatalf("promotion pull request %+v, want one into env by Strata", p)
		}
		return out[0]
	}

	cr := hydrateAt(4, "Scale to 4")
	first := open()
	if first.Title != "Hydrate dev: "+shas[0][:7] || !strings.Contains(cr.Summary, "Opened the promotion pull request [#") {
		t.Errorf("first promotion: %q; check:\n%s", first.Title, cr.Summary)
	}
	if got := e.Repo.Branch("env"); got != env {
		t.Errorf("env moved before any merge: %s", got)
	}
	if _, ok := e.Repo.FileAt("staging/dev", "dev/"+hydrate.SyncStateFile); !ok || e.parent(e.Repo.Branch("staging/dev")) != env {
		t.Errorf("staging/dev is not one hydration commit on env")
	}

	// Updated twice: by the second hydration, then by the third.
	cr = hydrateAt(5, "Scale to 5")
	if second := open(); second.Number != first.Number || second.Title != "Hydrate dev: "+shas[0][:7]+", "+shas[1][:7] ||
		!strings.Contains(second.Body, "2 commits, oldest first") || !strings.Contains(cr.Summary, "Updated the promotion pull request [#") {
		t.Errorf("after the second hydration: #%d %q\n%s\ncheck:\n%s", second.Number, second.Title, second.Body, cr.Summary)
	}
	cr = hydrateAt(6, "Scale to `6`\n\nwith a body")
	pr := open()
	if pr.Number != first.Number {
		t.Fatalf("a newer hydration opened #%d instead of updating #%d", pr.Number, first.Number)
	}
	if want := "Hydrate dev: " + shas[0][:7] + ", " + shas[1][:7] + ", " + shas[2][:7]; pr.Title != want {
		t.Errorf("title = %q, want %q", pr.Title, want)
	}
	for _, want := range []string{"3 commits, oldest first", "`Scale to 4` by `acme`", "`Scale to 5`", "`` Scale to `6` ``",
		"/commit/" + shas[2], " added, 0 changed, 0 removed.", "add `dev/deployment_dev_api.yaml`"} {
		if !strings.Contains(pr.Body, want) {
			t.Errorf("body lacks %q:\n%s", want, pr.Body)
		}
	}
	if !strings.Contains(cr.Summary, "Updated the promotion pull request [#") {
		t.Errorf("check of the third hydration:\n%s", cr.Summary)
	}

	e.Repo.ClosePR(pr.Number, true)
	if dep, _ := e.Repo.FileAt("env", "dev/deployment_dev_api.yaml"); !strings.Contains(dep, "replicas: 6") {
		t.Fatalf("the merge did not promote replicas 6 into env:\n%s", dep)
	}
	hydrateAt(7, "Scale to 7")
	var next githubtest.Pull
	for _, p := range e.Repo.Pulls("staging/dev") {
		if p.State == "open" {
			next = p
		}
	}
	if next.Number == 0 || next.Number == pr.Number || next.Title != "Hydrate dev: "+shas[3][:7] ||
		!strings.Contains(next.Body, "1 commit, oldest first") || !strings.Contains(next.Body, "change `dev/deployment_dev_api.yaml`") {
		t.Errorf("after the merge, the next hydration's pull request: %+v", next)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}
