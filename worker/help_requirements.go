package worker

import (
	"fmt"
	"slices"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
)

// requirementHelp says what each apply requirement asks of a pull request,
// as /help explains the ones this repository's layers use.
var requirementHelp = map[config.ApplyRequirement]string{
	config.Approved:   "an approving review of the head commit by someone other than the author, with write permission",
	config.Mergeable:  "no conflicts and no failing check other than Strata's",
	config.Undiverged: "the branch contains the tip of the base branch",
	config.CodeOwners: "each file of the layer the pull request changes (in its dir, its var files, its `when_modified` globs and the local modules it calls) " +
		"has an approval of the head commit from one of its code owners, as the default branch's CODEOWNERS names them (a team through any of its members)",
}

// onMergeHelp is the part of /help that lists the layers a merge applies
// (auto_apply: on_merge, policy from the default branch) and how; "" when
// there are none.
func onMergeHelp(layers []config.Layer) string {
	var names []string
	for _, l := range layers {
		if l.AppliesOnMerge() {
			names = append(names, markdown.Quote(l.Name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("**Applied on merge** (`auto_apply: on_merge`): %s. Merging a pull request that changes one applies it: "+
		"Strata plans the merge commit and applies that plan only if it makes the changes of the pull request's last plan, "+
		"with its apply requirements (approved, codeowners) and policy sets checked against the pull request.\n\n", strings.Join(names, ", "))
}

// requirementsHelp is the part of /help that lists the layers' apply
// requirements (policy from the default branch) and what each asks; ""
// when no layer has any.
func requirementsHelp(layers []config.Layer) string {
	var rows []string
	var used []config.ApplyRequirement
	for _, l := range layers {
		if len(l.ApplyRequirements) == 0 {
			continue
		}
		names := make([]string, len(l.ApplyRequirements))
		for i, r := range l.ApplyRequirements {
			names[i] = string(r)
			if !slices.Contains(used, r) {
				used = append(used, r)
			}
		}
		rows = append(rows, fmt.Sprintf("%s: %s", markdown.Quote(l.Name), strings.Join(names, ", ")))
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**Apply requirements** (`/apply` is refused until they hold): %s\n\n", strings.Join(rows, "; "))
	for _, r := range config.ApplyRequirements {
		if slices.Contains(used, r) {
			fmt.Fprintf(&b, "- `%s`: %s\n", r, requirementHelp[r])
		}
	}
	return b.String() + "\n"
}
