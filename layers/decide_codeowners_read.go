package layers

import (
	"slices"

	"github.com/hmarr/codeowners"

	"strata.dev/strata/config"
)

// What readCodeowners reads, decided on what it read before: which layers
// need CODEOWNERS at all, and whose team members are worth asking GitHub
// for.

// requiringCodeowners are the layers with the codeowners apply
// requirement; without one, nothing of code owners is read.
func requiringCodeowners(layers []config.Layer) []config.Layer {
	var out []config.Layer
	for _, l := range layers {
		if slices.Contains(l.ApplyRequirements, config.CodeOwners) {
			out = append(out, l)
		}
	}
	return out
}

// teamsToAsk are the teams whose members are read: the team owners of the
// layers' files (teamsToRead), once some approval could count for code
// owners (codeownerApprovers). Without one, no team could be satisfied,
// and asking GitHub would only spend its rate limit.
func teamsToAsk(f requirementFacts, files []string, rules codeowners.Ruleset) []string {
	if approvers, _ := codeownerApprovers(f.Reviews, f.Head, f.Author, f.Reviewers); len(approvers) == 0 {
		return nil
	}
	return teamsToRead(files, rules)
}
