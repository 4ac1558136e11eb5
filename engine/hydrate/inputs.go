package hydrate

import (
	"path"
	"sort"
	"strings"
)

// InputsChanged reports whether a push that changed changedFiles (repo-relative
// paths) can change the hydration whose recorded inputs are inputs. It is true
// when there are no recorded inputs (the first hydration), when a changed file
// was read or looked for by kustomize, or when it lies directly in a directory
// kustomize listed (entries ending in "/", as Result.Inputs records them).
func InputsChanged(inputs, changedFiles []string) bool {
	if len(inputs) == 0 {
		return true
	}
	set := make(map[string]bool, len(inputs))
	for _, in := range inputs {
		set[in] = true
	}
	for _, f := range changedFiles {
		f = path.Clean(strings.TrimPrefix(f, "/"))
		if set[f] || set[path.Dir(f)+"/"] {
			return true
		}
	}
	return false
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
