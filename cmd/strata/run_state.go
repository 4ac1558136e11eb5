package main

import (
	"fmt"
	"io"
	"path/filepath"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
)

// sayLocalState tells whoever runs `strata run` where a layer's state is:
// on the server Strata keeps the state of a layer without a backend block,
// here Terraform keeps it in a local file, as it always did.
func sayLocalState(w io.Writer, root string, l config.Layer) {
	dir := filepath.Join(root, filepath.FromSlash(l.Dir))
	if declares, err := terraform.DeclaresBackend(dir); err != nil || declares {
		return
	}
	fmt.Fprintf(w, "[strata] state: local (terraform.tfstate in %s): on the server, Strata keeps this layer's state; `strata state pull %s` fetches it\n",
		l.Dir, l.Name)
}
