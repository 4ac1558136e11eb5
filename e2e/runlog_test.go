package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
)

// The plan check links the run's full log; the link opens it on Strata's
// server, and a link without the right key opens nothing.
func TestRunLogLinkOpensTheLog(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3)})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	plan := e.completed(pr.HeadSHA(), networkPlan)

	public := e.Config.PublicURL
	if !strings.HasPrefix(plan.DetailsURL, public+"/runs/") || !strings.Contains(plan.DetailsURL, "?key=") {
		t.Fatalf("plan check details URL %q, want a keyed link under %s/runs/", plan.DetailsURL, public)
	}
	link := "http://" + e.Server.Addr() + strings.TrimPrefix(plan.DetailsURL, public)
	body := get(t, link)
	for _, want := range []string{"layer_plan", "acme/infra#1", "terraform_data.r2", "$ terraform plan"} {
		if !strings.Contains(body, want) {
			t.Errorf("run log lacks %q:\n%s", want, body)
		}
	}
	base, _, _ := strings.Cut(link, "?")
	// Without a key the address is the web UI's run page, behind a login.
	res, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Request.URL.Path != "/login" || strings.Contains(string(page), "terraform_data.r2") {
		t.Errorf("GET %s without a key ended on %s, want the login page and no log", base, res.Request.URL)
	}
	for _, bad := range []string{base + "?key=00000000000000000000000000000000", strings.Replace(base, "/runs/", "/runs/9", 1) + "?key=" + strings.SplitN(link, "key=", 2)[1]} {
		if code := status(t, bad); code != http.StatusNotFound {
			t.Errorf("GET %s answered %d, want 404", bad, code)
		}
	}
}
