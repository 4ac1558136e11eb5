package terraform

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strconv"

	tfjson "github.com/hashicorp/terraform-json"
)

// PlannedChange is one managed resource a plan changes, as two plans of a
// layer are compared (auto_apply: on_merge applies a plan made at the merge
// commit only when it makes the changes of the plan that was reviewed).
// Values are the planned values ("after") flattened to leaves, path to
// value: a leaf known only after apply is UnknownValue, a long or sensitive
// one a digest, so that the record stays small and holds no secret in
// clear. Callers keep it sealed all the same.
type PlannedChange struct {
	Address string            `json:"address"`
	Actions []string          `json:"actions"`
	Values  map[string]string `json:"values,omitempty"`
	// Sensitive are the paths of Values that Terraform marks sensitive: a
	// report names them, never shows them.
	Sensitive []string `json:"sensitive,omitempty"`
}

// UnknownValue stands for a value known only after apply.
const UnknownValue = "(known after apply)"

// maxLeafValue is the longest value kept as is; a longer one is kept as
// its digest (it still compares, it is not shown).
const maxLeafValue = 256

// DigestPrefix starts a value kept as its digest.
const DigestPrefix = "sha256:"

// addPlannedChange records a managed resource's change that is not a no-op.
func (r *PlanResult) addPlannedChange(rc *resourceChange) {
	if rc.Mode != tfjson.ManagedResourceMode || rc.Change == nil || rc.Change.Actions.NoOp() {
		return
	}
	c := PlannedChange{Address: rc.Address, Values: map[string]string{}}
	for _, a := range rc.Change.Actions {
		c.Actions = append(c.Actions, string(a))
	}
	after, unknown, sensitive := decodeLoose(rc.Change.After), decodeLoose(rc.Change.AfterUnknown), rc.Change.AfterSensitive
	flatten("", after, unknown, sensitive, func(path, value string, secret bool) {
		if secret || len(value) > maxLeafValue {
			sum := sha256.Sum256([]byte(value))
			value = DigestPrefix + hex.EncodeToString(sum[:])
		}
		if secret {
			c.Sensitive = append(c.Sensitive, path)
		}
		c.Values[path] = value
	})
	sort.Strings(c.Sensitive)
	r.Changes = append(r.Changes, c)
}

// decodeLoose decodes a raw JSON value with numbers kept as written; an
// absent or broken value is nil.
func decodeLoose(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	return v
}

// flatten calls leaf for every leaf of value: a scalar, an empty object or
// list, or a node that unknown marks (UnknownValue) or sensitive marks
// whole. Paths read like Terraform's: tags.env, rule[0].port.
func flatten(path string, value, unknown, sensitive any, leaf func(path, value string, sensitive bool)) {
	if b, ok := unknown.(bool); ok && b {
		leaf(path, UnknownValue, false)
		return
	}
	if b, ok := sensitive.(bool); ok && b {
		leaf(path, canonical(value), true)
		return
	}
	switch v := value.(type) {
	case map[string]any:
		flattenMap(path, v, unknown, sensitive, leaf)
	case []any:
		um, _ := unknown.([]any)
		sm, _ := sensitive.([]any)
		n := max(len(v), len(um))
		if n == 0 {
			leaf(path, "[]", false)
		}
		for i := range n {
			flatten(path+"["+strconv.Itoa(i)+"]", at(v, i), at(um, i), at(sm, i), leaf)
		}
	default:
		if um, ok := unknown.(map[string]any); ok && len(um) > 0 {
			flattenMap(path, map[string]any{}, um, sensitive, leaf)
			return
		}
		leaf(path, canonical(value), false)
	}
}

func flattenMap(path string, v map[string]any, unknown, sensitive any, leaf func(path, value string, sensitive bool)) {
	um, _ := unknown.(map[string]any)
	sm, _ := sensitive.(map[string]any)
	keys := map[string]bool{}
	for k := range v {
		keys[k] = true
	}
	for k := range um {
		keys[k] = true
	}
	if len(keys) == 0 {
		leaf(path, "{}", false)
		return
	}
	for k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		flatten(p, v[k], um[k], sm[k], leaf)
	}
}

func at(list []any, i int) any {
	if i < len(list) {
		return list[i]
	}
	return nil
}

// canonical is a value as JSON, map keys sorted.
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
