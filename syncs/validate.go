package syncs

import (
	"fmt"
	"sort"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// validated is what validating a hydrated output means for its check:
// Block stops the hydration before anything is committed; otherwise
// Conclusion replaces a successful one (neutral when objects are invalid
// under warn) and Text is added to the summary.
type validated struct {
	Block      bool
	Conclusion string
	Title      string
	Text       string
}

// Bounds of what a check lists: the first objects and the start of each
// problem say what to fix (a check's text has 65,535 bytes for everything).
const (
	maxInvalidListed  = 10
	maxProblemBytes   = 300
	maxUnvalidatedKin = 10
)

// validationOutcome decides what a validation (nil when the mode is off)
// does to a hydration or a preview under mode (off, warn, block).
func validationOutcome(mode string, v *hydrate.Validation) validated {
	if mode == config.ValidateOff || v == nil {
		return validated{Conclusion: "success"}
	}
	out := validated{Conclusion: "success", Text: validationText(mode, v)}
	if n := len(v.Invalid); n > 0 {
		out.Title = words.Count(n, "invalid object", "invalid objects")
		switch mode {
		case config.ValidateBlock:
			out.Block, out.Conclusion = true, "failure"
		default:
			out.Conclusion = "neutral"
		}
	}
	return out
}

func validationText(mode string, v *hydrate.Validation) string {
	var b strings.Builder
	total := v.Checked + len(v.Unvalidated)
	switch {
	case len(v.Invalid) == 0:
		fmt.Fprintf(&b, "**Validation:** %s valid against Kubernetes %s's schemas", words.Count(v.Checked, "object", "objects"), v.Kubernetes)
	case mode == config.ValidateBlock:
		fmt.Fprintf(&b, "**Validation failed:** %s of %d invalid against Kubernetes %s's schemas; `hydrate.validate: block`, so nothing was committed",
			words.Count(len(v.Invalid), "object", "objects"), total, v.Kubernetes)
	default:
		fmt.Fprintf(&b, "**Validation:** %s of %d invalid against Kubernetes %s's schemas (`hydrate.validate: warn`: reported, not blocking)",
			words.Count(len(v.Invalid), "object", "objects"), total, v.Kubernetes)
	}
	b.WriteString(".\n\n")
	for i, inv := range v.Invalid {
		if i == maxInvalidListed {
			fmt.Fprintf(&b, "- … and %d more\n", len(v.Invalid)-i)
			break
		}
		fmt.Fprintf(&b, "- %s: %s %s\n", markdown.Quote(inv.File), markdown.Quote(inv.Kind), markdown.Quote(inv.Name))
		for _, p := range inv.Problems {
			fmt.Fprintf(&b, "  - %s\n", markdown.Quote(markdown.Head(p, maxProblemBytes)))
		}
	}
	if len(v.Invalid) > 0 {
		b.WriteString("\n")
	}
	if len(v.Unvalidated) > 0 {
		kinds := map[string]int{}
		for _, u := range v.Unvalidated {
			kinds[u.APIVersion+" "+u.Kind]++
		}
		names := make([]string, 0, len(kinds))
		for k := range kinds {
			names = append(names, k)
		}
		sort.Strings(names)
		var list []string
		for i, k := range names {
			if i == maxUnvalidatedKin {
				list = append(list, fmt.Sprintf("… and %d more kinds", len(names)-i))
				break
			}
			list = append(list, fmt.Sprintf("%s (%d)", markdown.Quote(k), kinds[k]))
		}
		fmt.Fprintf(&b, "Not validated (kinds these schemas do not know, such as custom resources): %s.\n\n", strings.Join(list, ", "))
	}
	return b.String()
}

// validateOutput validates a hydrated output under its sync's mode (the
// server's when the sync sets none).
func validateOutput(d *worker.Deps, spec jobs.SyncSpec, res *hydrate.Result) (validated, error) {
	mode := d.Config.Hydrate.ValidateMode(spec.Validate)
	if mode == config.ValidateOff {
		return validationOutcome(mode, nil), nil
	}
	v, err := hydrate.Validate(res.Files)
	if err != nil {
		return validated{}, err
	}
	return validationOutcome(mode, v), nil
}

// finishing adds the validation to what a check's finish reports: a
// successful conclusion becomes the validation's, and its text follows the
// summary.
func (v validated) finishing(finish func(conclusion, title, summary string) error) func(conclusion, title, summary string) error {
	return func(conclusion, title, summary string) error {
		return finish(v.apply(conclusion, title, summary))
	}
}

// apply is what finishing reports instead of a check's conclusion, title
// and summary.
func (v validated) apply(conclusion, title, summary string) (string, string, string) {
	if conclusion == "success" && v.Conclusion != "success" {
		conclusion, title = v.Conclusion, title+"; "+v.Title
	}
	if v.Text != "" {
		summary = strings.TrimRight(summary, "\n") + "\n\n" + v.Text
	}
	return conclusion, title, summary
}

// previewing is finishing for a preview's check, whose text holds the diff:
// a blocking validation fails the preview too, since merging would not
// hydrate.
func (v validated) previewing(finish func(conclusion, title, summary, text string) error) func(conclusion, title, summary, text string) error {
	return func(conclusion, title, summary, text string) error {
		return v.finishing(func(c, t, s string) error { return finish(c, t, s, text) })(conclusion, title, summary)
	}
}
