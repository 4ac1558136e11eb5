package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/sandbox"
)

// The web UI's sandbox page shows the table of `strata version` and
// /readyz: here, a server playing a non-root one on Linux 6.1 (best_effort)
// names the two protections it lacks and what keeps the others. A
// stranger sees the login page instead.
func TestUISandboxPageShowsWhatIsMissing(t *testing.T) {
	e := apptest.Start(t, apptest.Options{Local: true, Configure: func(c *config.Server) {
		c.Terraform.Sandbox = "best_effort"
		c.Terraform.SandboxTest = sandbox.Cap{MaxABI: 2, NotRoot: true}
	}})
	e.Repo.SetPermission("alice", "read")
	res, body := fetchPage(t, browser(t), e.Config.PublicURL+"/sandbox")
	if res.Request.URL.Path != "/login" || strings.Contains(body, "no signal to Strata") {
		t.Errorf("a stranger ended on %s:\n%s", res.Request.URL, body)
	}
	_, body = fetchPage(t, uiLogin(t, e, "alice"), e.Config.PublicURL+"/sandbox")
	for _, want := range []string{
		`<code>best_effort (landlock ABI 2, seccomp): runs without no signal to Strata; no process outliving the run</code>`,
		`<tr data-promise="no signal to Strata" data-missing>`,
		`<td>no traffic sniffed</td>` + "\n    " + `<td>no capabilities, seccomp filter</td>`,
		`<tr data-promise="no read of Strata&#39;s secrets">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the sandbox page lacks %q:\n%s", want, body)
		}
	}
}
