package web

import (
	"net/http"

	"strata.dev/strata/sandbox"
)

// sandboxPage shows what keeps each protection of Terraform's sandbox on
// this replica, or that it is missing: the table of `strata version` and
// /readyz, for an operator who has only the UI.
func (u *UI) sandboxPage(w http.ResponseWriter, r *http.Request) {
	v, ok := u.viewer(w, r)
	if !ok {
		return
	}
	rep := sandbox.Detect(u.opts.Deps.Config.Terraform.SandboxSettings())
	u.render(w, http.StatusOK, "sandbox", Page{Title: "Sandbox", Viewer: v, Nav: "sandbox", Data: rep})
}
