package layers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hmarr/codeowners"

	"strata.dev/strata/config"
	"strata.dev/strata/pull"
	"strata.dev/strata/pull/pulltest"
	"strata.dev/strata/store"
)

// The default branch's CODEOWNERS in these tests: a catch-all, the network
// layer's dir, its var files (last match wins: email only), a module, and a
// file with no owners.
const ownersFile = `# Platform owns everything not named below.
*                            @acme/platform
/infra/network/              @acme/network @alice
/infra/network/*.tfvars      ops@example.com
/modules/vpc/                @acme/network
/infra/network/NOTES.md
`

func rulesOf(t *testing.T, text string) codeowners.Ruleset {
	t.Helper()
	rules, problem := parseCodeowners([]byte(text))
	if problem != "" {
		t.Fatal(problem)
	}
	return rules
}

// Each changed file's owners by the last rule that matches it; a file is
// covered by one approving owner, a team by one approving member.
func TestCodeownersMissing(t *testing.T) {
	rules := rulesOf(t, ownersFile)
	teams := map[string][]string{"acme/network": {"bob", "Carol"}, "acme/platform": {"dave"}}
	for _, tc := range []struct {
		name      string
		files     []string
		approvers []string
		teams     map[string][]string
		want      []ownerNeed
	}{
		{name: "nobody approved", files: []string{"infra/network/main.tf"},
			want: []ownerNeed{{Files: []string{"infra/network/main.tf"}, Owners: []string{"@acme/network", "@alice"}}}},
		{name: "a user owner approved", files: []string{"infra/network/main.tf"}, approvers: []string{"alice"}},
		{name: "logins are case-insensitive", files: []string{"infra/network/main.tf"}, approvers: []string{"ALICE"}},
		{name: "a member of an owning team approved", files: []string{"infra/network/main.tf"}, approvers: []string{"carol"}, teams: teams},
		{name: "a team whose members were not read approves nothing", files: []string{"infra/network/main.tf"}, approvers: []string{"bob"},
			want: []ownerNeed{{Files: []string{"infra/network/main.tf"}, Owners: []string{"@acme/network", "@alice"}}}},
		{name: "an approver of another team", files: []string{"infra/network/main.tf"}, approvers: []string{"dave"}, teams: teams,
			want: []ownerNeed{{Files: []string{"infra/network/main.tf"}, Owners: []string{"@acme/network", "@alice"}}}},
		{name: "the last matching rule wins: an email nobody can approve as", files: []string{"infra/network/prod.tfvars"},
			approvers: []string{"alice", "bob"}, teams: teams,
			want: []ownerNeed{{Files: []string{"infra/network/prod.tfvars"}, Owners: []string{"ops@example.com"}}}},
		{name: "a rule without owners: no code owner, none needed", files: []string{"infra/network/NOTES.md"}},
		{name: "a module's owners", files: []string{"modules/vpc/main.tf", "modules/vpc/sub/x.tf"}, approvers: []string{"alice"}, teams: teams,
			want: []ownerNeed{{Files: []string{"modules/vpc/main.tf", "modules/vpc/sub/x.tf"}, Owners: []string{"@acme/network"}}}},
		{name: "grouped by owners, in the order of their first file",
			files: []string{"README.md", "infra/network/main.tf", "infra/network/outputs.tf", "modules/vpc/main.tf", "x/y.tf"},
			want: []ownerNeed{
				{Files: []string{"README.md", "x/y.tf"}, Owners: []string{"@acme/platform"}},
				{Files: []string{"infra/network/main.tf", "infra/network/outputs.tf"}, Owners: []string{"@acme/network", "@alice"}},
				{Files: []string{"modules/vpc/main.tf"}, Owners: []string{"@acme/network"}},
			}},
		{name: "each group covered by its own approver", files: []string{"README.md", "infra/network/main.tf", "modules/vpc/main.tf"},
			approvers: []string{"dave", "bob"}, teams: teams},
		{name: "no files", approvers: []string{"alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := codeownersMissing(tc.files, rules, tc.approvers, tc.teams)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("missing = %+v, want %+v", got, tc.want)
			}
		})
	}
	// A file no rule matches has no code owner.
	if got := codeownersMissing([]string{"infra/dns/main.tf"}, rulesOf(t, "/infra/network/ @alice\n"), nil, nil); got != nil {
		t.Errorf("a file no rule matches = %+v, want nothing needed", got)
	}
}

// Whose approval can count: the standing review of each reviewer,
// approving the head, by someone else than the author with write or more.
func TestCodeownerApprovers(t *testing.T) {
	perms := map[string]pull.Permission{"alice": pull.Write, "bob": pull.Maintain, "rita": pull.Read, "carol": pull.Admin}
	for _, tc := range []struct {
		name      string
		reviews   []pull.Review
		approvers []string
		notes     []string
	}{
		{name: "an approval of the head", reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}}, approvers: []string{"bob"}},
		{name: "the author's own", reviews: []pull.Review{{Author: "Alice", State: "APPROVED", CommitID: head}},
			notes: []string{"the author's own approval does not count"}},
		{name: "a reader's", reviews: []pull.Review{{Author: "rita", State: "APPROVED", CommitID: head}},
			notes: []string{"@rita has read permission, so their approval does not count"}},
		{name: "a stranger's", reviews: []pull.Review{{Author: "eve", State: "APPROVED", CommitID: head}},
			notes: []string{"@eve has no permission, so their approval does not count"}},
		{name: "of an older commit", reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: oldHead}},
			notes: []string{"@bob approved 0000000, not the head 1111111"}},
		{name: "changes requested after approving", reviews: []pull.Review{
			{Author: "bob", State: "APPROVED", CommitID: head}, {Author: "bob", State: "CHANGES_REQUESTED", CommitID: head}}},
		{name: "dismissed", reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}, {Author: "bob", State: "DISMISSED", CommitID: head}}},
		{name: "a comment after approving changes nothing", reviews: []pull.Review{
			{Author: "carol", State: "APPROVED", CommitID: head}, {Author: "carol", State: "COMMENTED", CommitID: head}}, approvers: []string{"carol"}},
		{name: "approved again at the head after a push", reviews: []pull.Review{
			{Author: "bob", State: "APPROVED", CommitID: oldHead}, {Author: "bob", State: "APPROVED", CommitID: head}}, approvers: []string{"bob"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			approvers, notes := codeownerApprovers(tc.reviews, head, "alice", perms)
			if !slices.Equal(approvers, tc.approvers) || !slices.Equal(notes, tc.notes) {
				t.Errorf("approvers, notes = %q, %q; want %q, %q", approvers, notes, tc.approvers, tc.notes)
			}
		})
	}
}

// What a layer counts as its own among the changed files.
func TestLayerFiles(t *testing.T) {
	l := config.Layer{Name: "network", Dir: "infra/network", VarFiles: []string{"../env/prod.tfvars"},
		Autoplan: config.Autoplan{WhenModified: []string{"*.tf", "../shared/*.tf"}}}
	changed := []string{
		"infra/network/main.tf", "infra/network/templates/user-data.sh", "infra/network/main.tf",
		"infra/shared/common.tf", "infra/env/prod.tfvars", "infra/env/dev.tfvars",
		"modules/vpc/main.tf", "modules/vpc/files/policy.json", "modules/vpcx/main.tf",
		"infra/networking/main.tf", "README.md",
	}
	want := []string{"infra/env/prod.tfvars", "infra/network/main.tf", "infra/network/templates/user-data.sh",
		"infra/shared/common.tf", "modules/vpc/files/policy.json", "modules/vpc/main.tf"}
	if got := layerFiles(l, changed, []string{"modules/vpc"}); !slices.Equal(got, want) {
		t.Errorf("files = %q\nwant %q", got, want)
	}
	root := config.Layer{Name: "root", Dir: "."}
	if got := layerFiles(root, []string{"b.tf", "a/x.md"}, nil); !slices.Equal(got, []string{"a/x.md", "b.tf"}) {
		t.Errorf("a layer at the root owns every file: %q", got)
	}
}

// The refusal: what is missing, bounded, every PR-controlled name quoted.
func TestUnmetCodeowners(t *testing.T) {
	rules := rulesOf(t, ownersFile)
	read := func(files ...string) codeownersFacts {
		return codeownersFacts{Read: true, Branch: "main", File: ".github/CODEOWNERS", Rules: rules, Files: map[string][]string{"network": files}}
	}
	hostile := "infra/network/`@eve` <b>x</b>.tf"
	many := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%02d.tf", prefix, i))
		}
		return out
	}
	const need = "it requires an approval of the head commit from a code owner of each file of the layer the pull request changes"
	for _, tc := range []struct {
		name string
		f    requirementFacts
		want string
	}{
		{name: "not read", f: requirementFacts{}, want: need + ", and Strata did not read the code owners; try again"},
		{name: "the PR changes no file of the layer", f: requirementFacts{Codeowners: read()}},
		{name: "no CODEOWNERS on the default branch",
			f:    requirementFacts{Codeowners: codeownersFacts{Read: true, Branch: "main", Files: map[string][]string{"network": {"infra/network/main.tf"}}}},
			want: need + ", and `main` has no CODEOWNERS file (`.github/CODEOWNERS`, `CODEOWNERS`, `docs/CODEOWNERS`); add one there, or drop `codeowners` from the layer's apply_requirements"},
		{name: "a CODEOWNERS that cannot be used",
			f: requirementFacts{Codeowners: codeownersFacts{Read: true, Branch: "main", File: "CODEOWNERS", Problem: "line 3: unexpected character '[' at position 1",
				Files: map[string][]string{"network": {"infra/network/main.tf"}}}},
			want: need + ", and `CODEOWNERS` on `main` cannot be used: `line 3: unexpected character '[' at position 1`; fix it on `main`"},
		{name: "met", f: requirementFacts{Head: head, Author: "zed", Codeowners: read("infra/network/main.tf"),
			Reviews: []pull.Review{{Author: "alice", State: "APPROVED", CommitID: head}}, Reviewers: map[string]pull.Permission{"alice": pull.Write}}},
		{name: "missing, with the approvals that do not count, a hostile file name quoted",
			f: requirementFacts{Head: head, Author: "alice", Codeowners: read(hostile, "infra/network/prod.tfvars"),
				Reviews:   []pull.Review{{Author: "alice", State: "APPROVED", CommitID: head}, {Author: "bob", State: "APPROVED", CommitID: oldHead}},
				Reviewers: map[string]pull.Permission{"alice": pull.Write, "bob": pull.Write}},
			want: need + " (`.github/CODEOWNERS` on `main`); still needed: ``infra/network/`@eve` <b>x</b>.tf`` by `@acme/network` or `@alice`; " +
				"`infra/network/prod.tfvars` by `ops@example.com` (the author's own approval does not count; @bob approved 0000000, not the head 1111111; " +
				"an owner named by email cannot be matched to a GitHub login: name them as @login in CODEOWNERS)"},
		{name: "a team Strata could not read",
			f: requirementFacts{Head: head, Codeowners: func() codeownersFacts {
				co := read("modules/vpc/main.tf")
				co.Unreadable = map[string]string{"acme/network": "GitHub does not show it"}
				return co
			}()},
			want: need + " (`.github/CODEOWNERS` on `main`); still needed: `modules/vpc/main.tf` by `@acme/network` (Strata could not read the members of `@acme/network`: GitHub does not show it)"},
		{name: "many files of one owner: ten are listed",
			f: requirementFacts{Head: head, Codeowners: read(many("modules/vpc/f", 12)...)},
			want: need + " (`.github/CODEOWNERS` on `main`); still needed: `modules/vpc/f00.tf`, `modules/vpc/f01.tf`, `modules/vpc/f02.tf`, `modules/vpc/f03.tf`, " +
				"`modules/vpc/f04.tf`, `modules/vpc/f05.tf`, `modules/vpc/f06.tf`, `modules/vpc/f07.tf`, `modules/vpc/f08.tf`, `modules/vpc/f09.tf` and 2 more files by `@acme/network`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := unmetCodeowners("network", tc.f); got != tc.want {
				t.Errorf("why =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}

	// Twelve groups of owners: ten are listed.
	var text strings.Builder
	var files []string
	for i := range 12 {
		fmt.Fprintf(&text, "/g%02d/ @owner%02d\n", i, i)
		files = append(files, fmt.Sprintf("g%02d/main.tf", i))
	}
	co := codeownersFacts{Read: true, Branch: "main", File: "CODEOWNERS", Rules: rulesOf(t, text.String()), Files: map[string][]string{"network": files}}
	why := unmetCodeowners("network", requirementFacts{Head: head, Codeowners: co})
	if !strings.HasSuffix(why, "`g09/main.tf` by `@owner09`; and 2 more groups") || strings.Contains(why, "g10") {
		t.Errorf("twelve groups = %s", why)
	}
}

// A CODEOWNERS file GitHub would not load, or that the parser would read
// only in part, is a problem, never a shorter list of rules.
func TestParseCodeowners(t *testing.T) {
	for _, tc := range []struct {
		name, text, problem string
		rules               int
	}{
		{name: "good", text: ownersFile, rules: 5},
		{name: "empty", text: ""},
		{name: "a line that does not parse", text: "/a/ @x\n[abc] @y\n/b/ @z\n", problem: "line 2: unexpected character '[' at position 1"},
		{name: "an owner that is none", text: "/a/ x\n", problem: "line 1: invalid owner format 'x' at position 5"},
		{name: "a line longer than the scanner reads", text: "/a/ @x\n/" + strings.Repeat("b", 70_000) + " @y\n/c/ @z\n", problem: "line 2 is longer than 64 KiB"},
		{name: "larger than GitHub loads", text: strings.Repeat("/a/ @x\n", (3<<20)/7+1), problem: "it is larger than GitHub's limit of 3 MB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, problem := parseCodeowners([]byte(tc.text))
			if problem != tc.problem || len(rules) != tc.rules {
				t.Errorf("parse = %d rules, %q; want %d, %q", len(rules), problem, tc.rules, tc.problem)
			}
		})
	}
}

// The facts come from the default branch (not the PR's head), in GitHub's
// lookup order; teams are read only when some approval could count.
func TestReadCodeowners(t *testing.T) {
	owned := network
	owned.ApplyRequirements = []config.ApplyRequirement{config.CodeOwners}
	noTree := func() (string, func(), error) {
		t.Error("the tree was read though every changed file is the layer's")
		return "", nil, errors.New("no tree")
	}
	boom := errors.New("not to be read")
	base := func() pulltest.Context {
		return pulltest.Context{Head: head, AuthorValue: "alice", Files: []string{"infra/network/main.tf"},
			FileContents: map[string]string{
				// GitLab's place, which GitHub does not read.
				"main:.gitlab/CODEOWNERS":    "* @nobody\n",
				"main:CODEOWNERS":            "/infra/ @root-owner\n",
				"main:docs/CODEOWNERS":       "/infra/ @docs-owner\n",
				head + ":.github/CODEOWNERS": "* @alice\n",
			},
			TeamsErr: boom}
	}

	// Root CODEOWNERS (no .github/ one on main); the head's own file, which
	// names the author, is not read. No approval: no team is read.
	pr := base()
	f := requirementFacts{Author: "alice", Head: head}
	if err := readCodeowners(context.Background(), &pr, []config.Layer{owned}, noTree, &f); err != nil {
		t.Fatal(err)
	}
	if why := unmetCodeowners("network", f); why != "it requires an approval of the head commit from a code owner of each file of the layer the pull request changes "+
		"(`CODEOWNERS` on `main`); still needed: `infra/network/main.tf` by `@root-owner`" {
		t.Errorf("why = %s", why)
	}

	// .github/CODEOWNERS comes first; an approval makes the team read.
	pr = base()
	pr.FileContents["main:.github/CODEOWNERS"] = "/infra/ @acme/network\n"
	pr.TeamsErr = nil
	pr.Teams = map[string][]string{"acme/network": {"bob"}}
	pr.ReviewsValue = []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}}
	pr.PermissionsValue = map[string]pull.Permission{"bob": pull.Write}
	f = requirementFacts{Author: "alice", Head: head}
	if err := readCodeowners(context.Background(), &pr, []config.Layer{owned}, noTree, &f); err != nil {
		t.Fatal(err)
	}
	if f.Codeowners.File != ".github/CODEOWNERS" || !reflect.DeepEqual(f.Codeowners.Teams, map[string][]string{"acme/network": {"bob"}}) {
		t.Errorf("facts = %+v", f.Codeowners)
	}
	if why := unmetCodeowners("network", f); why != "" {
		t.Errorf("a team member's approval: %s", why)
	}

	// A team GitHub does not show is unreadable, not an error.
	pr.Teams = nil
	f = requirementFacts{Author: "alice", Head: head}
	if err := readCodeowners(context.Background(), &pr, []config.Layer{owned}, noTree, &f); err != nil {
		t.Fatal(err)
	}
	if f.Codeowners.Unreadable["acme/network"] == "" {
		t.Errorf("unreadable = %v", f.Codeowners.Unreadable)
	}

	// A layer that does not require code owners reads nothing.
	pr = pulltest.Context{FilesErr: boom, ReviewsErr: boom, TeamsErr: boom}
	f = requirementFacts{}
	if err := readCodeowners(context.Background(), &pr, []config.Layer{network}, noTree, &f); err != nil || f.Codeowners.Read {
		t.Errorf("read for a layer without the requirement: %v, %+v", err, f.Codeowners)
	}
}

// A file outside the layer's dir makes its local modules read from the
// head's tree: a module's change is the layer's.
func TestReadCodeownersModules(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"infra/network/main.tf": "module \"vpc\" {\n  source = \"../../modules/vpc\"\n}\n",
		"modules/vpc/main.tf":   "variable \"cidr\" {}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	released := false
	tree := func() (string, func(), error) { return root, func() { released = true }, nil }
	owned := network
	owned.ApplyRequirements = []config.ApplyRequirement{config.CodeOwners}
	pr := pulltest.Context{Head: head, AuthorValue: "alice", Files: []string{"modules/vpc/main.tf", "README.md"},
		FileContents: map[string]string{"main:.github/CODEOWNERS": "/modules/vpc/ @net-owner\n"}}
	f := requirementFacts{Author: "alice", Head: head}
	if err := readCodeowners(context.Background(), &pr, []config.Layer{owned}, tree, &f); err != nil {
		t.Fatal(err)
	}
	if !released || !slices.Equal(f.Codeowners.Files["network"], []string{"modules/vpc/main.tf"}) {
		t.Errorf("released %v, files %q", released, f.Codeowners.Files)
	}
}

// decideApply refuses a layer that requires code owners until they approve.
func TestDecideApplyCodeowners(t *testing.T) {
	owned := network
	owned.ApplyRequirements = []config.ApplyRequirement{config.CodeOwners}
	pr := pulltest.Context{Head: head, AuthorValue: "alice", Files: []string{"infra/network/main.tf"},
		FileContents: map[string]string{"main:.github/CODEOWNERS": "/infra/network/ @acme/network\n"},
		Teams:        map[string][]string{"acme/network": {"bob"}}, PermissionsValue: map[string]pull.Permission{"bob": pull.Write}}
	decide := func() applyDecision {
		reqs, err := readRequirements(context.Background(), &pr, []config.Layer{owned})
		if err != nil {
			t.Fatal(err)
		}
		if err := readCodeowners(context.Background(), &pr, []config.Layer{owned}, nil, &reqs); err != nil {
			t.Fatal(err)
		}
		return decideApply(applyFacts{PR: 7, Head: head, Layers: []config.Layer{owned}, All: all,
			Plans: []*store.Plan{plan("network", head, true, false)}, Locks: map[string]int{"network": 7}, Requirements: reqs})
	}
	if d := decide(); !slices.Equal(d.Refuse, []string{"network"}) || !strings.Contains(d.Reason, "`infra/network/main.tf` by `@acme/network`") {
		t.Errorf("without approval: %+v", d)
	}
	pr.ReviewsValue = []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}}
	if d := decide(); !slices.Equal(names(d.Run), []string{"network"}) {
		t.Errorf("after a team member approved: %+v", d)
	}
	// Facts never read refuse rather than apply unchecked.
	d := decideApply(applyFacts{PR: 7, Head: head, Layers: []config.Layer{owned}, All: all,
		Plans: []*store.Plan{plan("network", head, true, false)}, Locks: map[string]int{"network": 7}})
	if !strings.Contains(d.Reason, "did not read the code owners") {
		t.Errorf("unread facts: %+v", d)
	}
}

// The plan comment's next step says what an /apply would be refused for.
func TestPlanCommentNamesMissingCodeowners(t *testing.T) {
	why := "it requires an approval of the head commit from a code owner of each file of the layer the pull request changes " +
		"(`CODEOWNERS` on `main`); still needed: `infra/network/main.tf` by `@acme/network`"
	c := planComment([]layerReport{{Layer: "network", layerAt: at("infra/network"), Result: withChanges(createText), CodeOwners: why}})
	want := "Next: code owners must approve first, as `/apply network` would be refused now: " + why + ". Then `/apply network` to apply.\n"
	if !strings.Contains(c, want) {
		t.Errorf("comment lacks %q:\n%s", want, c)
	}
	if c := planComment([]layerReport{{Layer: "network", layerAt: at("infra/network"), Result: withChanges(createText)}}); strings.Contains(c, "code owners") {
		t.Errorf("a layer without the requirement: %s", c)
	}
}
