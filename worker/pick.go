package worker

import (
	"fmt"

	"strata.dev/strata/report"
)

// Pick returns the entries of all that names name (each once, in the order
// named), or an error the user reads, naming those that are not entries
// of the repository and listing the ones that are. is says whether an
// entry answers to a name, nameOf is how the list calls it, and what is
// the kind, singular and plural ("layer", "layers").
func Pick[T any](all []T, names []string, is func(T, string) bool, nameOf func(T) string, what, whats string) ([]T, error) {
	var out []T
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		found := false
		for _, e := range all {
			if is(e, n) {
				found = true
				if !seen[nameOf(e)] {
					seen[nameOf(e)] = true
					out = append(out, e)
				}
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, e := range all {
			known = append(known, nameOf(e))
		}
		return nil, fmt.Errorf("no %s %s in this repository; its %s are: %s",
			what, report.Names(unknown), whats, report.Names(known))
	}
	return out, nil
}
