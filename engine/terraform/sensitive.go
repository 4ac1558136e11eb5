package terraform

import "sort"

// longestFirst lists the values of a set, longest first: redacting "abc"
// before "abcdef" would leave "def" behind. Terraform's JSON carries
// sensitive values in clear next to a parallel tree of marks
// (`before_sensitive`, `after_sensitive`, `sensitive_values`): true marks a
// whole subtree, objects and arrays mark their members (walkMarked).
func longestFirst(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// walkMarked calls add for every string in value that marks covers.
func walkMarked(value, marks any, add func(string)) {
	switch m := marks.(type) {
	case bool:
		if m {
			walkAll(value, add)
		}
	case map[string]any:
		if v, ok := value.(map[string]any); ok {
			for k, sub := range m {
				walkMarked(v[k], sub, add)
			}
		}
	case []any:
		if v, ok := value.([]any); ok {
			for i, sub := range m {
				if i < len(v) {
					walkMarked(v[i], sub, add)
				}
			}
		}
	}
}

func walkAll(value any, add func(string)) {
	switch v := value.(type) {
	case string:
		add(v)
	case map[string]any:
		for _, sub := range v {
			walkAll(sub, add)
		}
	case []any:
		for _, sub := range v {
			walkAll(sub, add)
		}
	}
}
