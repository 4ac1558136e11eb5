package githubtest

import (
	"net/http"
	"sort"
)

// The App's installations and their repositories: the fake has one
// installation, on the acme organization, with every repository of acme.

// installationAccount is the account the one installation is on.
const installationAccount = "acme"

func (s *Server) listInstallations(c *call) {
	c.page([]any{s.installationJSON()})
}

func (s *Server) listInstallationRepos(c *call) {
	var names []string
	for key, r := range s.repos {
		if r.Owner == installationAccount {
			names = append(names, key)
		}
	}
	sort.Strings(names)
	items := make([]any, 0, len(names))
	for _, n := range names {
		items = append(items, s.repos[n].json())
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(items), "repository_selection": "all", "repositories": c.paginate(items)})
}
