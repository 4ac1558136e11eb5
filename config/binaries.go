package config

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Binary is a Terraform or OpenTofu binary layers may run. A layer picks
// the kind with `engine:` in .strata.yaml, and of that kind the highest
// version its required_version allows (docs/engines.md).
//
//	terraform:
//	  binaries:
//	    - {path: /opt/terraform/1.5.7/terraform, kind: terraform}
//	    - {path: /opt/terraform/1.9.8/terraform, kind: terraform}
//	    - {path: /usr/local/bin/tofu, kind: tofu}
type Binary struct {
	Path string `yaml:"path"`
	Kind string `yaml:"kind"` // EngineTerraform or EngineTofu
}

// The engines a layer may name, and binaries be.
const (
	EngineTerraform = "terraform"
	EngineTofu      = "tofu"
)

// BinariesEnv sets terraform.binaries from the environment: KIND=PATH
// entries separated like PATH, e.g.
// "terraform=/opt/tf/terraform:tofu=/opt/tofu/tofu".
const BinariesEnv = "STRATA_TERRAFORM_BINARIES"

// parseBinaries reads the value of BinariesEnv; what it cannot read is a
// problem of the config.
func parseBinaries(v string) ([]Binary, []string) {
	var out []Binary
	var problems []string
	for _, entry := range splitList(v, string(os.PathListSeparator)) {
		kind, path, ok := strings.Cut(entry, "=")
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: %q is not KIND=PATH (e.g. tofu=/usr/local/bin/tofu)", BinariesEnv, entry))
			continue
		}
		out = append(out, Binary{Kind: strings.TrimSpace(kind), Path: strings.TrimSpace(path)})
	}
	return out, problems
}

// Binaries are every binary layers may run: terraform_bin
// (STRATA_TERRAFORM_BIN), a terraform, then terraform.binaries. With none
// configured, `terraform` on the PATH runs, found when a layer runs.
func (s *Server) Binaries() []Binary {
	var out []Binary
	if s.TerraformBin != "" {
		out = append(out, Binary{Path: s.TerraformBin, Kind: EngineTerraform})
	}
	return append(out, s.Terraform.Binaries...)
}

// binariesProblems checks, when the config loads, that each binary is an
// executable file of a known kind; their versions are asked when a layer
// first needs one.
func binariesProblems(bins []Binary) []string {
	var out []string
	for i, b := range bins {
		key := fmt.Sprintf("terraform.binaries[%d]", i)
		switch b.Kind {
		case EngineTerraform, EngineTofu:
		default:
			out = append(out, fmt.Sprintf("%s.kind %q: want terraform or tofu", key, b.Kind))
		}
		if p := executableProblem(b.Path); p != "" {
			out = append(out, fmt.Sprintf("%s.path: %s", key, p))
		}
	}
	return out
}

// executableProblem says why path is not a binary Strata can run, or "".
func executableProblem(path string) string {
	if path == "" {
		return "missing: give the binary's path"
	}
	resolved, err := exec.LookPath(path)
	if err != nil {
		return fmt.Sprintf("%q is not an executable file (%v)", path, err)
	}
	fi, err := os.Stat(resolved)
	if err != nil || fi.IsDir() {
		return fmt.Sprintf("%q is not an executable file", path)
	}
	return ""
}
