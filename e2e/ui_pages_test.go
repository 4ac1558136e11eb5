package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/runlog"
	"strata.dev/strata/store"
)

// The web UI's pages over what Strata holds: a writer sees a layer's lock
// and runs, a takeover, the queue; a reader's Unlock and Release are
// refused with the permission table's reason, a writer's Unlock releases
// the lock through the same command a comment runs.
func TestUIPagesOfARepository(t *testing.T) {
	e, pr := wandaLocksNetwork(t)
	e.WaitIdle(layersWait)
	st := e.Server.Store()
	ctx := t.Context()
	if _, _, err := st.TryTakeover(ctx, store.Takeover{Repo: e.Repo.FullName(), Sync: "dev", PR: pr.Number, Holder: "wanda",
		HeadSHA: pr.HeadSHA(), ExpiresAt: time.Now().Add(2 * time.Hour), InstallationID: e.GitHub.InstallationID()}); err != nil {
		t.Fatal(err)
	}
	waiting, failed := uiJobs(t, e.Env, pr.Number)
	plan, err := st.LatestRun(ctx, e.Repo.FullName(), jobs.LayerPlan{}.Kind(), network)
	if err != nil {
		t.Fatal(err)
	}
	base := e.Config.PublicURL
	layerPath := "/repos/acme/infra/layers/" + url.PathEscape(network)
	wanda := uiLogin(t, e.Env, "wanda")
	for _, p := range []struct{ path, title string }{
		{"/repos/acme/infra", "acme/infra"},
		{layerPath, network},
		{"/runs/" + strconv.FormatInt(plan.ID, 10), "plan " + network},
		{"/queue", "Queue"},
	} {
		res, body := fetchPage(t, wanda, base+p.path)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, "<h1") || !strings.Contains(body, p.title) {
			t.Errorf("%s: %d, want the page %q:\n%.2000s", p.path, res.StatusCode, p.title, body)
		}
	}
	_, repo := fetchPage(t, wanda, base+"/repos/acme/infra")
	row := between(repo, `<tr data-layer="`+network+`">`, "</tr>")
	for _, want := range []string{`href="` + layerPath + `"`, "@wanda", ">#" + strconv.Itoa(pr.Number) + "<",
		`href="/runs/` + strconv.FormatInt(plan.ID, 10) + `"`, `<form class="unlock" data-layer="` + network + `" method="post" action="` + layerPath + `/unlock">`} {
		if !strings.Contains(row, want) {
			t.Errorf("the layer's row lacks %q:\n%s", want, row)
		}
	}
	if tk := between(repo, `<tr data-sync="dev">`, "</tr>"); !strings.Contains(tk, `<form class="release" data-sync="dev" method="post" action="/repos/acme/infra/syncs/dev/release">`) || !strings.Contains(tk, "@wanda") {
		t.Errorf("the takeover's row:\n%s", tk)
	}
	_, layer := fetchPage(t, wanda, base+layerPath)
	if runs := between(layer, `<table id="runs">`, "</table>"); !strings.Contains(runs, `data-run="`+strconv.FormatInt(plan.ID, 10)+`"`) || !strings.Contains(runs, "@wanda") ||
		!strings.Contains(runs, `/acme/infra/runs/`) {
		t.Errorf("the layer's runs lack the plan by @wanda with its check:\n%s", runs)
	}
	_, q := fetchPage(t, wanda, base+"/queue")
	for _, want := range []string{`data-job="` + strconv.FormatInt(waiting, 10) + `"`, `data-job="` + strconv.FormatInt(failed, 10) + `"`} {
		if !strings.Contains(q, want) {
			t.Errorf("the queue lacks %s:\n%s", want, between(q, `<table id="queue">`, "</table>"))
		}
	}
	if strings.Contains(q, "acme/secret") {
		t.Errorf("the queue shows a job of a repository wanda cannot read")
	}

	// rita reads: her Unlock and Release are refused, the lock stays.
	rita := uiLogin(t, e.Env, "rita")
	for _, action := range []string{layerPath + "/unlock", "/repos/acme/infra/syncs/dev/release"} {
		res, body := uiPost(t, rita, base, action, true)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, `id="refusal"`) || !strings.Contains(body, "@rita has read permission") {
			t.Errorf("rita's %s: %d, want 403 with the reason:\n%.3000s", action, res.StatusCode, body)
		}
	}
	if l, err := st.Lock(ctx, e.Repo.FullName(), network); err != nil || l.PR != pr.Number {
		t.Fatalf("after rita's Unlock the lock is %+v, %v", l, err)
	}
	// Without the form's CSRF token, not even wanda's post counts.
	if res, _ := uiPost(t, wanda, base, layerPath+"/unlock", false); res.StatusCode != http.StatusForbidden {
		t.Errorf("an unlock without the CSRF token: %d, want 403", res.StatusCode)
	}

	res, body := uiPost(t, wanda, base, layerPath+"/unlock", true)
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != "/repos/acme/infra" ||
		!strings.Contains(body, "Unlock of "+network+" requested by @wanda; the lock check on #"+strconv.Itoa(pr.Number)) {
		t.Errorf("wanda's Unlock ended %d on %s:\n%.3000s", res.StatusCode, res.Request.URL, body)
	}
	e.WaitFor(layersWait, func() bool {
		_, err := st.Lock(ctx, e.Repo.FullName(), network)
		return err != nil
	})
	noViolations(t, e.GitHub)
}

// uiJobs puts a job of acme/infra in the queue for later, one of
// acme/secret, and one of acme/infra that fails for good (its PR does not
// exist); it returns the ids of acme/infra's.
func uiJobs(t *testing.T, e *apptest.Env, pr int) (waiting, failed int64) {
	t.Helper()
	// A queue of the server's database that only inserts: the server's
	// own works the jobs.
	workers := river.NewWorkers()
	river.AddWorker(workers, river.WorkFunc(func(context.Context, *river.Job[jobs.Command]) error { return nil }))
	q, err := queue.New(e.Server.Store(), workers, queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	infra := jobs.NewRepo(e.GitHub.InstallationID(), "acme", "infra")
	later := &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}
	if waiting, err = q.Enqueue(t.Context(), jobs.Command{Repo: infra, PR: pr, User: "wanda", Body: "/plan"}, later); err != nil {
		t.Fatal(err)
	}
	secret := jobs.NewRepo(e.GitHub.InstallationID(), "acme", "secret")
	if _, err = q.Enqueue(t.Context(), jobs.Command{Repo: secret, PR: 1, User: "bob", Body: "/plan"}, later); err != nil {
		t.Fatal(err)
	}
	if failed, err = q.Enqueue(t.Context(), jobs.Command{Repo: infra, PR: 999, User: "wanda", Body: "/plan"}, &river.InsertOpts{MaxAttempts: 1}); err != nil {
		t.Fatal(err)
	}
	e.WaitFor(layersWait, func() bool {
		list, err := q.Jobs(t.Context(), queue.JobFilter{Repos: []string{"acme/infra"}, FailedSince: time.Now().Add(-time.Hour)})
		for _, j := range list {
			if j.ID == failed && j.Error != "" {
				return true
			}
		}
		return err != nil
	})
	return waiting, failed
}

// A run's page and its live log; what a user cannot read is 404 on every
// route, as if it did not exist; the keyed log link stays plain text.
func TestUIRunPageAndItsEvents(t *testing.T) {
	e := uiEnv(t)
	e.Repo.SetPermission("alice", "write")
	base := e.Config.PublicURL
	run := mustID(t, startRunOf(t, e, "acme/infra"))
	secretRun := startRunOf(t, e, "acme/secret")
	st := e.Server.Store()
	heartbeat(t, st, run)
	alice := uiLogin(t, e, "alice")

	res, page := fetchPage(t, alice, base+"/runs/"+strconv.FormatInt(run, 10))
	first, _ := st.Run(t.Context(), run)
	events := "/runs/" + strconv.FormatInt(run, 10) + "/events?from=" + strconv.Itoa(len(first.Log))
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<span id="run-state" class="state running">`) ||
		!strings.Contains(page, `<pre id="log" class="log live" data-events="`+strings.ReplaceAll(events, "&", "&amp;")+`">`) {
		t.Fatalf("the running run's page: %d\n%s", res.StatusCode, page)
	}

	for _, path := range []string{"/repos/acme/secret", "/repos/acme/secret/layers/network", "/runs/" + secretRun,
		"/runs/" + secretRun + "/events", "/repos/acme/nothing", "/runs/99999"} {
		if res, _ := fetchPage(t, alice, base+path); res.StatusCode != http.StatusNotFound {
			t.Errorf("alice's GET %s: %d, want 404", path, res.StatusCode)
		}
	}
	for _, path := range []string{"/repos/acme/secret/layers/network/unlock", "/repos/acme/secret/syncs/dev/release"} {
		if res, _ := uiPost(t, alice, base, path, true); res.StatusCode != http.StatusNotFound {
			t.Errorf("alice's POST %s: %d, want 404", path, res.StatusCode)
		}
	}
	keyed := runlog.URL(base, e.Config.GitHub.WebhookSecret, run)
	if res, body := fetchPage(t, browser(t), keyed); res.StatusCode != http.StatusOK ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || !strings.Contains(body, "Terraform will perform") {
		t.Errorf("the keyed log link: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}

	// The stream sends what the run appends, then its end.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+events, nil)
	res, err := alice.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("event stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	got := make(chan [2]string, 8)
	go func() {
		defer close(got)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				got <- [2]string{name, v}
			}
		}
	}()
	nextEvent := func() [2]string {
		t.Helper()
		select {
		case ev, ok := <-got:
			if !ok {
				t.Fatal("the event stream ended early")
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30s")
		}
		return [2]string{}
	}
	if err := st.AppendLog(t.Context(), run, "Plan: 1 to add\n"); err != nil {
		t.Fatal(err)
	}
	if ev := nextEvent(); ev != [2]string{"log", `"Plan: 1 to add\n"`} {
		t.Fatalf("first event %q, want the appended line", ev)
	}
	if err := st.FinishRun(t.Context(), run, store.RunSucceeded, "success", ""); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent()
	var done map[string]string
	if ev[0] != "done" || json.Unmarshal([]byte(ev[1]), &done) != nil || done["status"] != store.RunSucceeded || done["log"] != "" {
		t.Fatalf("second event %q, want done, succeeded, without a rewritten log", ev)
	}
	_, page = fetchPage(t, alice, base+"/runs/"+strconv.FormatInt(run, 10))
	if !strings.Contains(page, `<pre id="log" class="log">`) || strings.Contains(page, "data-events") {
		t.Errorf("the finished run's page still follows the log:\n%s", between(page, "<main>", "</main>"))
	}
}

// heartbeat renews a run's lease, as its worker would, until the run ends
// or the test does: the server's reaper takes a silent run for lost.
func heartbeat(t *testing.T, st *store.Store, run int64) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for st.Heartbeat(ctx, run) == nil {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}

// uiPost posts an empty form to path, with the session's CSRF token read
// from the repository list when csrf is set.
func uiPost(t *testing.T, c *http.Client, base, path string, csrf bool) (*http.Response, string) {
	t.Helper()
	form := url.Values{}
	if csrf {
		_, body := fetchPage(t, c, base+"/")
		m := csrfInput.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("no CSRF token on the repository list:\n%s", body)
		}
		form.Set("csrf", m[1])
	}
	res, err := c.PostForm(base+path, form)
	if err != nil {
		t.Fatal(err)
	}
	return res, readAll(t, res)
}

// between is the part of s from the first start to the end after it.
func between(s, start, end string) string {
	_, rest, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	in, _, _ := strings.Cut(rest, end)
	return start + in + end
}

// wandaLocksNetwork is the UI tests' repository: wanda (write) has planned
// the network layer in her PR and holds its lock; rita can read.
func wandaLocksNetwork(t *testing.T) (*layersEnv, *githubtest.PR) {
	t.Helper()
	e := startLayers(t, apptest.Options{Local: true}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("wanda", "write")
	e.Repo.SetPermission("rita", "read")
	pr := e.openPR("grow", "wanda", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "wanda", "/plan")
	e.completed(pr.HeadSHA(), networkPlan)
	return e, pr
}
