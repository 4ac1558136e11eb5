package terraform

import (
	"slices"
	"strings"
	"testing"
)

// A plan's JSON, read as it streams -> the counts, the changed addresses
// and outputs, and every value marked sensitive wherever it is (changes,
// drift, outputs, prior and planned state, child modules, sensitive
// variables); keys of no interest, null and nested, are skipped.
func TestReadPlanJSON(t *testing.T) {
	doc := `{
  "format_version": "1.2", "terraform_version": "1.5.7",
  "variables": {"password": {"value": "var-secret"}, "region": {"value": "eu"}},
  "planned_values": {
    "outputs": {"token": {"sensitive": true, "value": "out-secret"}, "name": {"sensitive": false, "value": "plain"}},
    "root_module": {
      "resources": [{"address": "x.a", "mode": "managed", "type": "x", "name": "a", "values": {"k": "planned-secret", "n": 1}, "sensitive_values": {"k": true}}],
      "child_modules": [{"address": "module.m", "resources": [{"address": "module.m.x.b", "mode": "managed", "type": "x", "name": "b", "values": {"l": ["child-secret", "open"]}, "sensitive_values": {"l": [true, false]}}]}]
    }
  },
  "resource_drift": [{"address": "x.d", "mode": "managed", "change": {"actions": ["update"], "before": {"k": "drift-secret"}, "before_sensitive": {"k": true}, "after": null}}],
  "resource_changes": [
    {"address": "x.a", "mode": "managed", "change": {"actions": ["create"], "before": null, "after": {"k": "change-secret", "big": "` + strings.Repeat("v", 100000) + `"}, "after_sensitive": {"k": true}}},
    {"address": "x.r", "mode": "managed", "change": {"actions": ["delete", "create"]}},
    {"address": "x.gone", "mode": "managed", "change": {"actions": ["delete"]}},
    {"address": "x.same", "mode": "managed", "change": {"actions": ["no-op"]}},
    {"address": "data.x.read", "mode": "data", "change": {"actions": ["read"]}},
    {"address": "x.imported", "mode": "managed", "change": {"actions": ["no-op"], "importing": {"id": "i-1"}}}
  ],
  "output_changes": {"token": {"actions": ["create"], "after": "out-secret", "after_sensitive": true}, "name": {"actions": ["update"], "before": "a", "after": "b"}, "kept": {"actions": ["no-op"]}},
  "prior_state": {"format_version": "1.0", "values": {"root_module": {"resources": [{"address": "x.p", "mode": "managed", "type": "x", "name": "p", "values": {"k": "prior-secret"}, "sensitive_values": {"k": true}}]}}},
  "configuration": {"root_module": {"outputs": {"token": {"sensitive": true, "expression": {}}, "name": {"expression": {"references": ["x.a"]}}}, "variables": {"password": {"sensitive": true}, "region": {}}}},
  "relevant_attributes": [{"resource": "x.a", "attribute": ["k"]}],
  "timestamp": "2026-12-04T00:00:00Z", "errored": false, "unknown": null
}`
	r, err := readPlanJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if r.Add != 2 || r.Change != 0 || r.Destroy != 2 || r.Import != 1 {
		t.Errorf("counts %d/%d/%d/%d, want 2 to add, 2 to destroy, 1 to import", r.Add, r.Change, r.Destroy, r.Import)
	}
	for name, got := range map[string][]string{"Changed": r.Changed, "Replaced": r.Replaced, "Destroyed": r.Destroyed} {
		want := map[string][]string{"Changed": {"x.a", "x.r", "x.gone", "x.imported"}, "Replaced": {"x.r"}, "Destroyed": {"x.gone"}}[name]
		if !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if want := []OutputChange{{Name: "name", Action: "change"}, {Name: "token", Action: "add", Sensitive: true}}; !slices.Equal(r.Outputs, want) {
		t.Errorf("Outputs = %+v, want %+v", r.Outputs, want)
	}
	want := []string{"planned-secret", "change-secret", "child-secret", "drift-secret", "prior-secret", "out-secret", "var-secret"}
	if !slices.Equal(r.Sensitive, want) {
		t.Errorf("Sensitive = %q, want %q", r.Sensitive, want)
	}
}

// A document cut short is an error, not a partial result.
func TestReadPlanJSONCutShort(t *testing.T) {
	if _, err := readPlanJSON(strings.NewReader(`{"resource_changes": [{"address": "x.a", "mode": "managed"`)); err == nil {
		t.Error("no error for a cut document")
	}
}
