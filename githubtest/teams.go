package githubtest

import (
	"net/http"
	"strings"
)

// Teams of the installation's organization (acme), for CODEOWNERS entries
// such as @acme/network. GitHub shows a team's members, those of its child
// teams included, to an installation with the organization's Members: read
// permission; a team of another organization, or one that does not exist,
// is 404 as on GitHub.

// team is a team of the installation's organization.
type team struct {
	id      int64
	name    string
	members []string
}

// SetTeam creates or replaces the team slug of org with these members, in
// the order GitHub would list them. Only org acme, the installation's, is
// visible to Strata.
func (s *Server) SetTeam(org, slug string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(org + "/" + slug)
	t := s.teams[key]
	if t == nil {
		t = &team{id: s.id(), name: slug}
		s.teams[key] = t
	}
	t.members = append([]string(nil), members...)
}

func (s *Server) listTeamMembers(c *call) {
	org, slug := c.params["org"], c.params["team_slug"]
	t := s.teams[strings.ToLower(org+"/"+slug)]
	if t == nil || !strings.EqualFold(org, installationAccount) {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	role := c.query("role")
	items := []any{}
	for _, m := range t.members {
		// Every member of the fake is a plain member: a maintainer filter
		// lists none.
		if role == "maintainer" {
			continue
		}
		u := s.userJSON(m)
		u["role"], u["inherited"] = "member", false
		items = append(items, u)
	}
	c.page(items)
}
