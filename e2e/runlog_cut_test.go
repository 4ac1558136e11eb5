package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/runlog"
	"strata.dev/strata/store"
)

// cutNote is what a log says where it reached the server's limit.
func cutNote(limit int) string {
	return "[strata] The log is cut here: it reached " + strconv.Itoa(limit) +
		" bytes, the most a run's log may hold (run_log_limit). The run went on.\n"
}

// A plan prints more than the server lets a run's log hold -> the plan
// completes as usual, its check shows the whole plan (the last resource
// too), and the log holds what fit, then says once that it was cut; it
// was stored by inserts, chunk after chunk; the keyed log link serves it.
func TestAPlanPastTheLogLimitCompletesWithTheCutNote(t *testing.T) {
	const limit = 3000
	e := startLayers(t, apptest.Options{Local: true, Configure: func(c *config.Server) { c.RunLogLimit = limit }}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "wanda", map[string]string{network + "/main.tf": e.layerFile(network, 80)})
	e.Repo.SetPermission("wanda", "write")
	e.comment(pr.Number, "wanda", "/plan")
	cr := e.completed(pr.HeadSHA(), networkPlan)
	if cr.Conclusion != "success" || cr.Title != "80 to add, 0 to change, 0 to destroy" || !strings.Contains(cr.Text, "terraform_data.r79") {
		t.Fatalf("plan check: %s %q, text:\n%.3000s", cr.Conclusion, cr.Title, cr.Text)
	}
	e.WaitIdle(layersWait)
	st := e.Server.Store()
	run, err := st.LatestRun(t.Context(), e.Repo.FullName(), "layer_plan", network)
	if err != nil {
		t.Fatal(err)
	}
	run, err = st.Run(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != store.RunSucceeded || strings.Count(run.Log, cutNote(limit)) != 1 || !strings.HasSuffix(run.Log, cutNote(limit)) ||
		len(run.Log) > limit+1+len(cutNote(limit)) || !strings.Contains(run.Log, "terraform init") {
		t.Fatalf("run %s, log of %d bytes:\n%s", run.Status, len(run.Log), run.Log)
	}
	// The log is in its chunks, none in the run's row. How many chunks
	// depends on how fast Terraform printed (the writer stores a batch at
	// most every 250 ms); that appends are inserts is store's test.
	var chunks int
	var inRow string
	if err := st.DB().QueryRow(st.Rebind(`SELECT count(*) FROM run_log_chunks WHERE run_id = ?`), run.ID).Scan(&chunks); err != nil || chunks < 1 {
		t.Errorf("the log is %d chunks (%v), want at least one", chunks, err)
	}
	if err := st.DB().QueryRow(st.Rebind(`SELECT log FROM runs WHERE id = ?`), run.ID).Scan(&inRow); err != nil || inRow != "" {
		t.Errorf("the run's row holds %d bytes of log (%v), want none", len(inRow), err)
	}

	res, body := fetchPage(t, browser(t), runlog.URL(e.Config.PublicURL, e.Config.GitHub.WebhookSecret, run.ID))
	if res.StatusCode != http.StatusOK || !strings.HasSuffix(body, "\n"+run.Log) {
		t.Errorf("the keyed log link: %d\n%s", res.StatusCode, body)
	}
}

// A running run's log reaches the limit while its page follows it -> the
// live log gets what fit and the note, nothing after; the end comes as
// usual, and the page and the keyed link show the cut log.
func TestUILiveLogOfACutLog(t *testing.T) {
	const limit = 100
	e := apptest.Start(t, apptest.Options{Local: true, Configure: func(c *config.Server) { c.RunLogLimit = limit }})
	e.Repo.SetPermission("alice", "write")
	base := e.Config.PublicURL
	run := mustID(t, startRunOf(t, e, "acme/infra")) // 59 bytes of log
	st := e.Server.Store()
	heartbeat(t, st, run)
	alice := uiLogin(t, e, "alice")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/runs/"+strconv.FormatInt(run, 10)+"/events?from=59", nil)
	res, err := alice.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("event stream: %d", res.StatusCode)
	}
	events := make(chan [2]string, 8)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = v
			} else if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- [2]string{name, v}
			}
		}
	}()
	next := func() [2]string {
		t.Helper()
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the event stream ended early")
			}
			return ev
		case <-time.After(30 * time.Second):
			t.Fatal("no event within 30s")
		}
		return [2]string{}
	}

	for _, text := range []string{"Plan: 1 to add\n", "0123456789012345678901234567890123456789\n", "after the cut\n"} {
		if err := st.AppendLog(t.Context(), run, text); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"Plan: 1 to add\n", "01234567890123456789012345\n" + cutNote(limit)}
	var got string
	for got != strings.Join(want, "") {
		ev := next()
		var text string
		if ev[0] != "log" || json.Unmarshal([]byte(ev[1]), &text) != nil {
			t.Fatalf("event %q, want the log's new text", ev)
		}
		got += text
		if !strings.HasPrefix(strings.Join(want, ""), got) {
			t.Fatalf("the live log got %q, want %q", got, want)
		}
	}
	if err := st.FinishRun(t.Context(), run, store.RunSucceeded, "success", ""); err != nil {
		t.Fatal(err)
	}
	ev := next()
	var done map[string]string
	if ev[0] != "done" || json.Unmarshal([]byte(ev[1]), &done) != nil || done["status"] != store.RunSucceeded || done["log"] != "" {
		t.Fatalf("event %q, want done, succeeded, without a rewritten log", ev)
	}

	whole := "Terraform will perform the following actions in acme/infra\n" + strings.Join(want, "")
	if _, page := fetchPage(t, alice, base+"/runs/"+strconv.FormatInt(run, 10)); !strings.Contains(page, "01234567890123456789012345\n[strata] The log is cut here") ||
		strings.Contains(page, "after the cut") {
		t.Errorf("the finished run's page:\n%s", between(page, "<main>", "</main>"))
	}
	res, body := fetchPage(t, browser(t), runlog.URL(base, e.Config.GitHub.WebhookSecret, run))
	if res.StatusCode != http.StatusOK || !strings.HasSuffix(body, "\n\n"+whole) {
		t.Errorf("the keyed log link: %d\n%s", res.StatusCode, body)
	}
}
