package githubtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	pullpkg "strata.dev/strata/pull"
)

// A team's members, every page, as package pull reads them for CODEOWNERS; a team
// that does not exist or of another organization is not found; the reads
// are cached per job.
func TestTeamMembers(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra")
	var many []string
	for i := range 130 {
		many = append(many, fmt.Sprintf("user%03d", i))
	}
	srv.SetTeam("acme", "network", many...)
	srv.SetTeam("other", "network", "eve")
	ctx := context.Background()
	repo := pullpkg.NewRepo(clientFor(t, srv), "acme", "infra")

	got, err := repo.TeamMembers(ctx, "acme", "Network")
	if err != nil || !slices.Equal(got, many) {
		t.Fatalf("members = %d %v, want the 130", len(got), err)
	}
	for _, team := range [][2]string{{"acme", "nope"}, {"other", "network"}} {
		if _, err := repo.TeamMembers(ctx, team[0], team[1]); !errors.Is(err, pullpkg.ErrNotFound) {
			t.Errorf("%s/%s: %v, want not found", team[0], team[1], err)
		}
	}
	reads := func() int {
		n := 0
		for _, r := range srv.Requests() {
			if strings.EqualFold(r.Path, "/api/v3/orgs/acme/teams/network/members") {
				n++
			}
		}
		return n
	}
	before := reads()
	if _, err := repo.TeamMembers(ctx, "acme", "network"); err != nil || reads() != before {
		t.Errorf("a second read of the team asked GitHub again: %v, %d requests after %d", err, reads(), before)
	}
	if before != 2 {
		t.Errorf("130 members took %d requests, want 2 pages of 100", before)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Errorf("violations: %v", v)
	}
}
