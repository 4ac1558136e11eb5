package terraform

import (
	"encoding/json"
	"sort"

	tfjson "github.com/hashicorp/terraform-json"
)

// sensitiveValues collects the values a plan marks sensitive. Terraform's JSON
// carries them in clear next to a parallel tree of marks (`before_sensitive`,
// `after_sensitive`, `sensitive_values`): true marks a whole subtree, objects
// and arrays mark their members.
func sensitiveValues(p *tfjson.Plan) []string {
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}

	changes := append(append([]*tfjson.ResourceChange{}, p.ResourceChanges...), p.ResourceDrift...)
	for _, rc := range changes {
		if c := rc.Change; c != nil {
			walkMarked(c.Before, c.BeforeSensitive, add)
			walkMarked(c.After, c.AfterSensitive, add)
		}
	}
	for _, c := range p.OutputChanges {
		walkMarked(c.Before, c.BeforeSensitive, add)
		walkMarked(c.After, c.AfterSensitive, add)
	}
	if p.PriorState != nil {
		walkState(p.PriorState.Values, add)
	}
	walkState(p.PlannedValues, add)

	if p.Config != nil && p.Config.RootModule != nil {
		for name, v := range p.Config.RootModule.Variables {
			if pv := p.Variables[name]; v.Sensitive && pv != nil {
				walkMarked(pv.Value, true, add)
			}
		}
	}

	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	// Longest first: redacting "abc" before "abcdef" would leave "def" behind.
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

func walkState(v *tfjson.StateValues, add func(string)) {
	if v == nil {
		return
	}
	for _, o := range v.Outputs {
		if o.Sensitive {
			walkMarked(o.Value, true, add)
		}
	}
	walkModule(v.RootModule, add)
}

func walkModule(m *tfjson.StateModule, add func(string)) {
	if m == nil {
		return
	}
	for _, r := range m.Resources {
		if len(r.SensitiveValues) == 0 {
			continue
		}
		var marks any
		if json.Unmarshal(r.SensitiveValues, &marks) == nil {
			walkMarked(r.AttributeValues, marks, add)
		}
	}
	for _, c := range m.ChildModules {
		walkModule(c, add)
	}
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
