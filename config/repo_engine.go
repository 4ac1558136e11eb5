package config

import "go.yaml.in/yaml/v3"

// engine decodes `engine: terraform|tofu`. It only chooses which of the
// operator's binaries runs, so a PR's own file decides it, unlike policy.
func (d *repoDecoder) engine(p *string) fieldFunc {
	return func(n *yaml.Node, what string) {
		var s string
		d.str(&s)(n, what)
		switch s {
		case EngineTerraform, EngineTofu:
			*p = s
		default:
			if d.resolve(n).Kind == yaml.ScalarNode {
				d.add(n.Line, "%s: want terraform or tofu, not %q", what, s)
			}
		}
	}
}

// inheritEngine gives the layers that name no engine the file's; empty
// still means terraform.
func inheritEngine(r *Repo) {
	for i := range r.Layers {
		if r.Layers[i].Engine == "" {
			r.Layers[i].Engine = r.Engine
		}
	}
}
