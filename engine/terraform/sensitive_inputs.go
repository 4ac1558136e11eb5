package terraform

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
)

// sensitiveInputs are the values the layer's sensitive root variables may
// take, read without Terraform: their defaults, what any variable file of
// the layer (terraform.tfvars, *.auto.tfvars, the layer's var files, and
// their JSON forms) assigns them, and TF_VAR_ variables of env. A plan's
// text masks every sensitive value but one passed through nonsensitive();
// these let the check be redacted before `show -json` gives the rest (the
// sensitive values of resources and outputs). Taking every candidate is
// safe: it is only used to mask.
func sensitiveInputs(workDir string, varFiles []string, env map[string]string) []string {
	mod, _ := loadModule(workDir)
	if mod == nil {
		return nil
	}
	sensitive := map[string]bool{}
	set := map[string]bool{}
	add := func(s string) {
		if s != "" {
			set[s] = true
		}
	}
	for name, v := range mod.Variables {
		if v.Sensitive {
			sensitive[name] = true
			walkAll(v.Default, add)
		}
	}
	if len(sensitive) == 0 {
		return nil
	}
	files := append(autoVarFiles(workDir), varFiles...)
	for _, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(workDir, f)
		}
		varFileValues(f, sensitive, add)
	}
	for k, v := range env {
		if name, ok := strings.CutPrefix(k, "TF_VAR_"); ok && sensitive[name] {
			add(v)
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) || len(out[i]) == len(out[j]) && out[i] < out[j] })
	return out
}

// autoVarFiles are the variable files Terraform reads without being told.
func autoVarFiles(dir string) []string {
	var out []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if n == "terraform.tfvars" || n == "terraform.tfvars.json" || strings.HasSuffix(n, ".auto.tfvars") || strings.HasSuffix(n, ".auto.tfvars.json") {
			out = append(out, filepath.Join(dir, n))
		}
	}
	return out
}

// varFileValues adds the strings a variable file assigns to the names in
// sensitive. A file that does not parse gives nothing: Terraform refuses it
// too, and the plan fails.
func varFileValues(path string, sensitive map[string]bool, add func(string)) {
	src, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var f *hcl.File
	var diags hcl.Diagnostics
	if strings.HasSuffix(path, ".json") {
		f, diags = hcljson.Parse(src, path)
	} else {
		f, diags = hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return
	}
	attrs, _ := f.Body.JustAttributes()
	for name, attr := range attrs {
		if !sensitive[name] {
			continue
		}
		if v, diags := attr.Expr.Value(nil); !diags.HasErrors() {
			ctyStrings(v, add)
		}
	}
}

// ctyStrings calls add for every string in v.
func ctyStrings(v cty.Value, add func(string)) {
	if v.IsNull() || !v.IsKnown() {
		return
	}
	switch {
	case v.Type() == cty.String:
		add(v.AsString())
	case v.CanIterateElements():
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			ctyStrings(e, add)
		}
	}
}
