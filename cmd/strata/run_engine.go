package main

import (
	"fmt"
	"os"
	"os/exec"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
)

// localBinary is the binary `strata run` runs a layer with, by its engine:
// $STRATA_TOFU_BIN or `tofu` on the PATH for `engine: tofu`, else
// $STRATA_TERRAFORM_BIN or `terraform` on the PATH. Locally there is one
// binary per engine, whatever required_version says; the binary checks it.
// A missing one is said before anything runs, naming the variable and the
// server's setting, rather than as each layer's failed plan.
func localBinary(l config.Layer) (string, terraform.Kind, error) {
	env, name, kind := terraform.BinaryEnv, "terraform", terraform.KindTerraform
	if l.Engine == config.EngineTofu {
		env, name, kind = terraform.TofuBinaryEnv, "tofu", terraform.KindTofu
	}
	return findLocalBinary(env, name, os.Getenv(env), kind)
}

func findLocalBinary(env, name, set string, kind terraform.Kind) (string, terraform.Kind, error) {
	server := fmt.Sprintf("(the server runs the binaries of terraform_bin and terraform.binaries in its config, %s)", config.BinariesEnv)
	if set != "" {
		bin, err := exec.LookPath(set)
		if err != nil {
			return "", kind, fmt.Errorf("%s=%s is not an executable file: %v; set it to the %s binary's path %s", env, set, err, kind.Name(), server)
		}
		return bin, kind, nil
	}
	bin, err := exec.LookPath(name)
	if err != nil {
		return "", kind, fmt.Errorf("no %s on the PATH: install %s, or set %s to its binary's path %s", name, kind.Name(), env, server)
	}
	return bin, kind, nil
}
