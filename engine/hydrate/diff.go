package hydrate

import (
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Diff renders the unified diff from old to new hydrated files, one section
// per added, removed or changed file, in file-name order. It is empty when
// the two are identical.
func Diff(old, new map[string][]byte) string {
	names := map[string]bool{}
	for n := range old {
		names[n] = true
	}
	for n := range new {
		names[n] = true
	}
	var b strings.Builder
	for _, name := range sortedKeys(names) {
		a, inOld := old[name]
		c, inNew := new[name]
		if inOld && inNew && string(a) == string(c) {
			continue
		}
		from, to := "a/"+name, "b/"+name
		if !inOld {
			from = "/dev/null"
		}
		if !inNew {
			to = "/dev/null"
		}
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A:        difflib.SplitLines(string(a)),
			B:        difflib.SplitLines(string(c)),
			FromFile: from,
			ToFile:   to,
			Context:  3,
		})
		if err != nil {
			// Writes to a strings.Builder do not fail.
			panic(err)
		}
		b.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}
