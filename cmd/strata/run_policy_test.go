package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// strata run policy over a plan's JSON: 0 when nothing blocks, 2 when a
// block set denies (each finding with its address), 1 when a set does not
// compile (its file and line).
func TestRunPolicyExitCodes(t *testing.T) {
	plan := `{"resource_changes":[{"address":"terraform_data.r0","change":{"actions":["create"]}}]}`
	deny := "package main\ndeny contains {\"msg\": \"no creations\", \"address\": rc.address} if {\n  some rc in input.resource_changes\n  \"create\" in rc.change.actions\n}\n"
	tests := []struct {
		name, enforcement, rego string
		code                    int
		out                     string
	}{
		{"allowed", "block", "package main\n", 0, "net: set guard (block): 0 denials, 0 warnings"},
		{"denied", "block", deny, 2, "  deny terraform_data.r0: no creations"},
		{"warn set", "warn", deny, 0, "net: set guard (warn): 1 denial, 0 warnings"},
		{"syntax error", "block", "package main\n\ndeny contains msg if {\n  msg := \n}\n", 1, "policy/guard.rego:5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				".strata.yaml":      "version: 1\nlayers: [{name: net, dir: net}]\npolicies: [{name: guard, path: policy, owners: [alice], enforcement: " + tt.enforcement + "}]\n",
				"net/main.tf":       "",
				"policy/guard.rego": tt.rego,
				"plan.json":         plan,
			}
			for p, c := range files {
				os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755)
				if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var out, errs bytes.Buffer
			code := execute(context.Background(), []string{"run", "policy", "net", "--repo", dir, "--plan-json", filepath.Join(dir, "plan.json")}, nil, &out, &errs)
			if code != tt.code || !strings.Contains(out.String(), tt.out) {
				t.Fatalf("exit %d, out %q, err %q; want %d and %q", code, out.String(), errs.String(), tt.code, tt.out)
			}
		})
	}
}
