package main

import (
	"os"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
)

// localBinary is the binary `strata run` runs a layer with, by its engine:
// $STRATA_TOFU_BIN or `tofu` on the PATH for `engine: tofu`, else
// $STRATA_TERRAFORM_BIN or `terraform` on the PATH (empty: the engine finds
// it). Locally there is one binary per engine, whatever required_version
// says; the binary checks it.
func localBinary(l config.Layer) (string, terraform.Kind) {
	if l.Engine == config.EngineTofu {
		bin, err := terraform.FindTofu()
		if err != nil {
			bin = "tofu" // the run fails saying it is not found
		}
		return bin, terraform.KindTofu
	}
	return os.Getenv(terraform.BinaryEnv), terraform.KindTerraform
}
