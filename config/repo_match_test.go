package config

import "testing"

func TestLayerMatches(t *testing.T) {
	network := &Layer{Dir: "infra/network", Autoplan: Autoplan{
		WhenModified: []string{"*.tf", "*.tfvars", "../modules/**/*.tf", "policies/**"}}}
	root := &Layer{Dir: ".", Autoplan: Autoplan{WhenModified: DefaultWhenModified}}
	tests := []struct {
		layer *Layer
		file  string
		want  bool
	}{
		{network, "infra/network/main.tf", true},
		{network, "infra/network/prod.tfvars", true},
		{network, "./infra/network/main.tf", true},
		{network, "infra/network/sub/main.tf", false},
		{network, "infra/network/README.md", false},
		{network, "infra/modules/vpc/main.tf", true},
		{network, "infra/modules/main.tf", true},
		{network, "infra/modules/a/b/c/main.tf", true},
		{network, "infra/modules/vpc/README.md", false},
		{network, "infra/network/policies/a/b.rego", true},
		{network, "infra/dns/main.tf", false},
		{network, "main.tf", false},
		{root, "main.tf", true},
		{root, "infra/network/main.tf", false},
		{&Layer{Dir: "a", Autoplan: Autoplan{WhenModified: []string{}}}, "a/main.tf", false},
	}
	for _, tt := range tests {
		if got := tt.layer.Matches(tt.file); got != tt.want {
			t.Errorf("layer %q Matches(%q) = %v, want %v", tt.layer.Dir, tt.file, got, tt.want)
		}
	}
}

func TestMatchGlobIsLinear(t *testing.T) {
	pat := []string{"**", "a", "**", "a", "**", "a", "**", "a", "**", "b"}
	name := make([]string, 200)
	for i := range name {
		name[i] = "a"
	}
	if matchGlob(pat, name) {
		t.Error("matched without a b")
	}
}
