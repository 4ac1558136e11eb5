package config

import (
	"testing"

	"strata.dev/strata/sandbox"
)

// The sandbox's settings from the config file's keys and the variables:
// today's `sandbox: off` still reads, best_effort is new, the user is
// nobody unless said.
func TestSandboxSettings(t *testing.T) {
	for _, tc := range []struct {
		tf   Terraform
		env  map[string]string
		want sandbox.Settings
	}{
		{Terraform{}, nil, sandbox.Settings{Mode: sandbox.On}},
		{Terraform{Sandbox: "off"}, nil, sandbox.Settings{Mode: sandbox.Off}},
		{Terraform{Sandbox: "best_effort", SandboxUser: "1234"}, nil, sandbox.Settings{Mode: sandbox.BestEffort, UID: 1234, GID: 1234}},
		{Terraform{Sandbox: "off"}, map[string]string{"STRATA_TERRAFORM_SANDBOX": "best_effort", "STRATA_TERRAFORM_SANDBOX_USER": "100:200"},
			sandbox.Settings{Mode: sandbox.BestEffort, UID: 100, GID: 200}},
	} {
		tf := tc.tf
		tf.applyEnv(func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		tf.applyDefaults()
		if p := tf.problems(); len(p) > 0 {
			t.Errorf("%+v: %v", tc.tf, p)
		}
		if got := tf.SandboxSettings(); got != tc.want {
			t.Errorf("%+v with %v: %+v, want %+v", tc.tf, tc.env, got, tc.want)
		}
	}
}
