package terraform

import (
	"reflect"
	"strings"
	"testing"
)

// The changes two plans are compared on: managed resources that change,
// their planned values flattened, unknown leaves marked, sensitive and long
// ones kept as digests.
func TestPlannedChanges(t *testing.T) {
	long := strings.Repeat("x", maxLeafValue+1)
	doc := `{"resource_changes": [
	  {"address": "world_thing.a", "mode": "managed", "change": {"actions": ["update"],
	    "before": {"name": "a", "value": "one"},
	    "after": {"name": "a", "value": "two", "tags": {"env": "prod"}, "ports": [80, 443], "secret": "hunter2", "blob": "` + long + `"},
	    "after_unknown": {"id": true, "tags": {}, "ports": [false, false]},
	    "after_sensitive": {"secret": true}}},
	  {"address": "world_thing.same", "mode": "managed", "change": {"actions": ["no-op"], "before": {}, "after": {}}},
	  {"address": "data.world_gate.g", "mode": "data", "change": {"actions": ["read"], "before": null, "after": {}}},
	  {"address": "world_thing.gone", "mode": "managed", "change": {"actions": ["delete"], "before": {"name": "gone"}, "after": null}}
	]}`
	r, err := readPlanJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []PlannedChange{
		{Address: "world_thing.a", Actions: []string{"update"}, Values: map[string]string{
			"name": `"a"`, "value": `"two"`, "tags.env": `"prod"`, "ports[0]": "80", "ports[1]": "443", "id": UnknownValue,
			"secret": "sha256:4ddbb67bf993867e13253c146a339ed3b33ea5b895543569278e99d5b3c2b7d5",
			"blob":   "sha256:b37cdb7a7571342b6044abd117e530d32fd34b89427452e85b52b06445e0273a",
		}, Sensitive: []string{"secret"}},
		{Address: "world_thing.gone", Actions: []string{"delete"}, Values: map[string]string{"": "null"}},
	}
	if !reflect.DeepEqual(r.Changes, want) {
		t.Fatalf("changes =\n%#v\nwant\n%#v", r.Changes, want)
	}
}
