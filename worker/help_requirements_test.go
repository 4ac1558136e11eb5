package worker

import (
	"testing"

	"strata.dev/strata/config"
)

// /help lists each layer's apply requirements and explains those in use.
func TestRequirementsHelp(t *testing.T) {
	layers := []config.Layer{
		{Name: "network", ApplyRequirements: []config.ApplyRequirement{config.Approved, config.CodeOwners}},
		{Name: "dns"},
		{Name: "app", ApplyRequirements: []config.ApplyRequirement{config.Approved}},
	}
	want := "**Apply requirements** (`/apply` is refused until they hold): `network`: approved, codeowners; `app`: approved\n\n" +
		"- `approved`: an approving review of the head commit by someone other than the author, with write permission\n" +
		"- `codeowners`: each file of the layer the pull request changes (in its dir, its var files, its `when_modified` globs and the local modules it calls) " +
		"has an approval of the head commit from one of its code owners, as the default branch's CODEOWNERS names them (a team through any of its members)\n\n"
	if got := requirementsHelp(layers); got != want {
		t.Errorf("help =\n%s\nwant\n%s", got, want)
	}
	if got := requirementsHelp([]config.Layer{{Name: "dns"}}); got != "" {
		t.Errorf("no requirements = %q", got)
	}
}

// /help names the layers a merge applies, and how.
func TestOnMergeHelp(t *testing.T) {
	layers := []config.Layer{{Name: "network", AutoApply: config.AutoApplyOnMerge}, {Name: "dns"}, {Name: "app", AutoApply: config.AutoApplyOnMerge}}
	want := "**Applied on merge** (`auto_apply: on_merge`): `network`, `app`. Merging a pull request that changes one applies it: " +
		"Strata plans the merge commit and applies that plan only if it makes the changes of the pull request's last plan, " +
		"with its apply requirements (approved, codeowners) and policy sets checked against the pull request.\n\n"
	if got := onMergeHelp(layers); got != want {
		t.Errorf("help =\n%s\nwant\n%s", got, want)
	}
	if got := onMergeHelp([]config.Layer{{Name: "dns"}}); got != "" {
		t.Errorf("nothing on merge = %q", got)
	}
}
