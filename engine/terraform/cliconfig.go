package terraform

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl"
	hclast "github.com/hashicorp/hcl/hcl/ast"
)

// CLIConfigPaths are the directories a Terraform CLI config file makes
// Terraform read providers from: the path of each filesystem_mirror and
// each dev_overrides directory of its provider_installation blocks. The
// sandbox opens them read-only, with the file. The file is read as
// Terraform 1.5 reads it (HCL 1, native or JSON syntax); a relative path
// is relative to the layer's directory, where it would be in the tree
// Terraform may read already, so it is not listed.
func CLIConfigPaths(file string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	f, err := hcl.ParseBytes(b)
	if err != nil {
		return nil, fmt.Errorf("terraform: CLI config %s: %w", file, err)
	}
	root, ok := f.Node.(*hclast.ObjectList)
	if !ok {
		return nil, nil
	}
	var paths []string
	add := func(p string) {
		if filepath.IsAbs(p) {
			paths = append(paths, filepath.Clean(p))
		}
	}
	var methods []*hclast.ObjectItem
	for _, block := range root.Filter("provider_installation").Items {
		if len(block.Keys) > 0 {
			// JSON, flattened by HCL 1: the keys left name the method.
			methods = append(methods, block)
		} else if body, ok := block.Val.(*hclast.ObjectType); ok {
			methods = append(methods, body.List.Items...)
		}
	}
	for _, method := range methods {
		if len(method.Keys) == 0 {
			continue
		}
		switch method.Keys[0].Token.Value() {
		case "filesystem_mirror":
			var m struct {
				Path string `hcl:"path"`
			}
			if err := hcl.DecodeObject(&m, method.Val); err != nil {
				return nil, fmt.Errorf("terraform: CLI config %s: filesystem_mirror: %w", file, err)
			}
			add(m.Path)
		case "dev_overrides":
			var m map[string]string
			if err := hcl.DecodeObject(&m, method.Val); err != nil {
				return nil, fmt.Errorf("terraform: CLI config %s: dev_overrides: %w", file, err)
			}
			for _, p := range m {
				add(p)
			}
		}
	}
	return paths, nil
}
