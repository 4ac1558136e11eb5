package config

import (
	"slices"
	"strings"
)

// UnpassedVars are the TF_VAR_* variables of the server's environment
// (environ as os.Environ gives it) that no run gets, because terraform.env
// does not list them. Terraform sees nothing of the server's environment
// unless listed: a variable set for the server is not meant for every PR's
// code, which could print it. Serve logs these names once, so an operator
// who expected them to pass learns why they did not.
func (t Terraform) UnpassedVars(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TF_VAR_") && !slices.Contains(t.Env, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
