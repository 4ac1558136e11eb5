package config

import "go.yaml.in/yaml/v3"

// AutoApply says whether merging a PR applies its layers. It is policy: a
// PR runs with the default branch's (see Effective), so it can neither turn
// it on to have its own merge apply what nobody was asked to apply, nor
// turn it off to leave a merged change unapplied behind others' backs.
type AutoApply string

const (
	// AutoApplyOff: only /apply applies. The default.
	AutoApplyOff AutoApply = "off"
	// AutoApplyOnMerge: when a PR that changed the layer merges, Strata
	// plans the layer at the merge commit and applies that plan if it makes
	// the same changes as the PR's last reviewed plan (docs/governance.md).
	AutoApplyOnMerge AutoApply = "on_merge"
)

// AppliesOnMerge reports whether merging a PR applies the layer.
func (l *Layer) AppliesOnMerge() bool { return l.AutoApply == AutoApplyOnMerge }

// autoApply decodes `auto_apply: on_merge|off`. YAML 1.1 readers take a
// bare off for false: both spellings are accepted.
func (d *repoDecoder) autoApply(p *AutoApply) fieldFunc {
	return func(n *yaml.Node, what string) {
		var s string
		if d.str(&s)(n, what); s == "" {
			return
		}
		switch m := AutoApply(s); m {
		case AutoApplyOff, AutoApplyOnMerge:
			*p = m
		case "false":
			*p = AutoApplyOff
		default:
			d.add(n.Line, "%s must be on_merge or off, not %q", what, s)
		}
	}
}

// defaultAutoApply gives the layers that set no auto_apply the file's; without
// either, it stays empty, which is off.
func defaultAutoApply(r *Repo) {
	for i := range r.Layers {
		if r.Layers[i].AutoApply == "" {
			r.Layers[i].AutoApply = r.AutoApply
		}
	}
}

// baseAutoApply is the auto_apply of l on the default branch: on_merge only
// when every default-branch layer l is (by name, or by dir and workspace)
// applies on merge; a layer only the PR defines never applies on merge: it
// was never the default branch's to apply.
func baseAutoApply(base *Repo, l *Layer) AutoApply {
	found, onMerge := false, true
	for _, b := range base.Layers {
		if b.Name == l.Name || (b.Dir == l.Dir && b.Workspace == l.Workspace) {
			found = true
			onMerge = onMerge && b.AppliesOnMerge()
		}
	}
	if found && onMerge {
		return AutoApplyOnMerge
	}
	return AutoApplyOff
}
