package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePolicies(t *testing.T) {
	good := `version: 1
layers:
  - {name: net, dir: net, policies: [guard]}
  - {name: dns, dir: dns, policies: []}
  - {name: web, dir: web}
policies:
  - {name: guard, path: policy/, owners: [alice, "@acme/platform"]}
  - {name: style, path: style/rules.rego, enforcement: warn}
`
	r, err := ParseRepo(".strata.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	want := []PolicySet{
		{Name: "guard", Path: "policy", Owners: []string{"alice", "@acme/platform"}, Enforcement: Block, Line: 7},
		{Name: "style", Path: "style/rules.rego", Enforcement: Warn, Line: 8},
	}
	if !reflect.DeepEqual(r.Policies, want) {
		t.Fatalf("policies %+v, want %+v", r.Policies, want)
	}
	if !reflect.DeepEqual(r.Layers[0].Policies, []string{"guard"}) || r.Layers[1].Policies == nil || len(r.Layers[1].Policies) != 0 || r.Layers[2].Policies != nil {
		t.Fatalf("layer policies %q %q %q: want [guard], [] and nil (every set)", r.Layers[0].Policies, r.Layers[1].Policies, r.Layers[2].Policies)
	}
	if err := r.Validate(fakeTree{"net": true, "dns": true, "web": true}); err != nil {
		t.Fatal(err)
	}

	bad := []struct{ yaml, want string }{
		{"policies: [{name: g, path: p, enforcement: never, owners: [a]}]", `.strata.yaml:2: policy set "g": enforcement must be block or warn, not "never"`},
		{"policies: [{name: g, path: p}]", `.strata.yaml:2: policy set "g": a block set needs owners`},
		{"policies: [{name: g, path: p, owners: [\"a b\"]}]", `owner "a b" is neither a GitHub login nor @org/team`},
		{"policies: [{name: g, owners: [a]}]", `needs "path"`},
		{"policies: [{name: g, path: p, owners: [a], extra: 1}]", `extra`},
	}
	for _, tt := range bad {
		_, err := ParseRepo(".strata.yaml", []byte("version: 1\n"+tt.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
	for _, tt := range []struct{ yaml, want string }{
		{"policies: [{name: g, path: ../out, owners: [a]}]", `path "../out" of policy set "g"`},
		{"policies: [{name: g, path: p, owners: [a]}, {name: g, path: q, owners: [a]}]", `"g"`},
		{"layers: [{dir: net, policies: [\"a b\"]}]", `policies of layer "net"`},
	} {
		r, err := ParseRepo(".strata.yaml", []byte("version: 1\n"+tt.yaml+"\n"))
		if err == nil {
			err = r.Validate(fakeTree{"net": true})
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.yaml, err, tt.want)
		}
	}
}

// A PR cannot change the policies that judge it: the sets and the layers'
// choice of them come from the default branch; a layer only the PR has is
// judged by every set.
func TestEffectivePolicies(t *testing.T) {
	def := &Repo{
		Layers:   []Layer{{Name: "net", Dir: "net", Workspace: "default", Policies: []string{"guard"}}},
		Policies: []PolicySet{{Name: "guard", Path: "policy", Owners: []string{"alice"}, Enforcement: Block}},
	}
	pr := &Repo{
		Layers: []Layer{
			{Name: "net", Dir: "net", Workspace: "default", Policies: []string{}},
			{Name: "new", Dir: "new", Workspace: "default", Policies: []string{}},
		},
		Policies: []PolicySet{{Name: "guard", Path: "allow-all", Owners: []string{"mallory"}, Enforcement: Warn}},
	}
	got := Effective(def, pr, Policy{})
	if !reflect.DeepEqual(got.Policies, def.Policies) {
		t.Errorf("sets %+v, want the default branch's %+v", got.Policies, def.Policies)
	}
	if !reflect.DeepEqual(got.Layers[0].Policies, []string{"guard"}) {
		t.Errorf("net chooses %q, want the default branch's [guard]", got.Layers[0].Policies)
	}
	if got.Layers[1].Policies != nil {
		t.Errorf("a layer only the PR has chooses %q, want every set (nil)", got.Layers[1].Policies)
	}
	if !PoliciesDiffer(def, pr) {
		t.Error("the PR's edits to the policies were not noticed")
	}
	if PoliciesDiffer(def, &Repo{Layers: []Layer{{Name: "net", Dir: "net", Workspace: "default", Policies: []string{"guard"}}}, Policies: def.Policies}) {
		t.Error("a PR that keeps the policies was said to edit them")
	}
	got.Policies[0].Owners[0] = "x"
	if def.Policies[0].Owners[0] != "alice" {
		t.Error("Effective shares the owners with its argument")
	}
}

func TestPolicySetsOf(t *testing.T) {
	sets := []PolicySet{{Name: "a"}, {Name: "b"}}
	tests := []struct {
		chosen      []string
		want        []string
		wantUnknown []string
	}{
		{nil, []string{"a", "b"}, nil},
		{[]string{}, nil, nil},
		{[]string{"b", "zz"}, []string{"b"}, []string{"zz"}},
	}
	for _, tt := range tests {
		got, unknown := PolicySetsOf(Layer{Policies: tt.chosen}, sets)
		var names []string
		for _, s := range got {
			names = append(names, s.Name)
		}
		if !reflect.DeepEqual(names, tt.want) || !reflect.DeepEqual(unknown, tt.wantUnknown) {
			t.Errorf("%q: %q %q, want %q %q", tt.chosen, names, unknown, tt.want, tt.wantUnknown)
		}
	}
}

func TestCheckPolicySets(t *testing.T) {
	got := CheckPolicySets([]PolicySet{{Name: "ok", Path: "/etc/strata/policy", Owners: []string{"@acme/sec"}},
		{Name: "ok", Path: "", Enforcement: Warn}, {Name: "no owners", Path: "/p"}})
	want := []string{
		`policies[1]: policy set "ok" is defined twice`,
		"policies[1]: path is required",
		`policies[2]: "no owners" is not a policy set name (letters, digits, -, _ and .)`,
		"policies[2]: a block set needs owners, who may approve what it denies",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q\nwant %q", got, want)
	}
}
