package config

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// How hydrated output is checked against Kubernetes' schemas
// (engine/hydrate.Validate): hydrate.validate in the server config, and
// validate: of a sync in .strata.yaml or a Sync file.
const (
	// ValidateOff validates nothing.
	ValidateOff = "off"
	// ValidateWarn lists the invalid objects on the hydrate check, which
	// stays successful (neutral on a preview), and hydrates anyway.
	ValidateWarn = "warn"
	// ValidateBlock fails the check and commits nothing.
	ValidateBlock = "block"
	// DefaultValidate is the server's default.
	DefaultValidate = ValidateWarn
)

func validValidate(v string) bool {
	return v == ValidateOff || v == ValidateWarn || v == ValidateBlock
}

func (d *repoDecoder) validateMode(p *string) fieldFunc {
	return func(n *yaml.Node, what string) {
		d.str(p)(n, what)
		if *p != "" && !validValidate(*p) {
			d.add(n.Line, "%s must be off, warn or block, not %q", what, *p)
		}
	}
}

// ValidateMode is how a sync's output is validated: its own validate, else
// the server's.
func (h *Hydrate) ValidateMode(s string) string {
	if s != "" {
		return s
	}
	if h.Validate == "" {
		return DefaultValidate
	}
	return h.Validate
}

func (h *Hydrate) validateProblems() []string {
	if h.Validate != "" && !validValidate(h.Validate) {
		return []string{fmt.Sprintf("hydrate.validate must be off, warn or block, not %q (STRATA_HYDRATE_VALIDATE)", h.Validate)}
	}
	return nil
}
