package layers

import (
	"context"
	"path"
	"slices"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/worker"
)

// layerModules are the local module directories each layer calls, directly
// or through other modules (repo-relative), by layer name: a change in one
// of them touches the layer as a change in its own dir does.
type layerModules map[string][]string

// touch reports whether the changed file touches layer l through one of its
// modules: a Terraform file directly in a module's dir. Only a layer with the
// default when_modified follows its modules; custom globs say all it watches.
func (m layerModules) touch(l config.Layer, file string) bool {
	if !followsModules(l) || !terraformFile(file) {
		return false
	}
	return slices.Contains(m[l.Name], path.Dir(path.Clean(file)))
}

func followsModules(l config.Layer) bool {
	return slices.Equal(l.Autoplan.WhenModified, config.DefaultWhenModified)
}

func terraformFile(name string) bool {
	for _, ext := range []string{".tf", ".tf.json", ".tfvars"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// moduleCandidates are the layers whose modules could decide whether the
// files touch them: layers that follow their modules and that their globs
// leave untouched, when some Terraform file is in no such layer's own dir
// (a file there is that layer's, not a module's). With none, the tree need
// not be read.
func moduleCandidates(all []config.Layer, files []string, autoplan bool) []config.Layer {
	unmatched := false
	for _, f := range files {
		owned := slices.ContainsFunc(all, func(l config.Layer) bool { return followsModules(l) && l.Matches(f) })
		if terraformFile(f) && !owned {
			unmatched = true
			break
		}
	}
	if !unmatched {
		return nil
	}
	touched := touchedLayers(all, files, nil, autoplan)
	var out []config.Layer
	for _, l := range all {
		if (autoplan && !l.Autoplan.Enabled) || !followsModules(l) ||
			slices.ContainsFunc(touched, func(t config.Layer) bool { return t.Name == l.Name }) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// readLayerModules reads, in the tree at sha, the local modules of the
// layers that could be touched only through them (moduleCandidates); it
// fetches the tree only when there is one.
func readLayerModules(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, all []config.Layer, files []string, autoplan bool) (layerModules, error) {
	candidates := moduleCandidates(all, files, autoplan)
	if len(candidates) == 0 {
		return nil, nil
	}
	root, release, err := d.Fetch(ctx, repo, sha)
	if err != nil {
		return nil, err
	}
	defer release()
	modules := layerModules{}
	for _, l := range candidates {
		modules[l.Name] = terraform.LocalModules(root, l.Dir)
	}
	return modules, nil
}
