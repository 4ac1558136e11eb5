package layers

import (
	"context"
	"errors"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/worker"
)

// binaryFor picks the binary that plans a layer whose tree is in dir: of
// the server's binaries of the layer's engine, the highest version its
// required_version allows (terraform.Pick).
func binaryFor(ctx context.Context, d *worker.Deps, engine, dir string) (terraform.Binary, error) {
	return terraform.Choose(ctx, serverBinaries(d), kindOf(engine), dir)
}

// planBinary picks the binary that applies a saved plan: the plan's engine
// (the layer's) in the version that made it (terraform.PickForPlan), even
// if the operator has added a newer one since. A plan whose version cannot
// be read (OpenTofu encrypts plans when told to) gives no binary: the
// apply runs what binaryFor picks, as its plan did.
func planBinary(ctx context.Context, d *worker.Deps, engine string, planFile []byte) (terraform.Binary, error) {
	b, err := terraform.ChooseForPlan(ctx, serverBinaries(d), kindOf(engine), planFile)
	if errors.Is(err, terraform.ErrNoPlanVersion) {
		return terraform.Binary{}, nil
	}
	return b, err
}

// serverBinaries are the binaries of the server config; with none
// configured, terraform on the PATH, as before there were several.
func serverBinaries(d *worker.Deps) []terraform.Binary {
	var bins []terraform.Binary
	for _, b := range d.Config.Binaries() {
		bins = append(bins, terraform.Binary{Path: b.Path, Kind: terraform.Kind(b.Kind)})
	}
	if len(bins) == 0 {
		if path, err := terraform.FindBinary(); err == nil {
			bins = append(bins, terraform.Binary{Path: path, Kind: terraform.KindTerraform})
		}
	}
	return bins
}

func kindOf(engine string) terraform.Kind {
	if engine == "" {
		return terraform.KindTerraform
	}
	return terraform.Kind(engine)
}
