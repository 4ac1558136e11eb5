package hydrate

import (
	"fmt"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
)

// kustomizeOptions turns off everything of kustomize that runs code or
// reaches past the tree, whatever kustomize's defaults become: files load
// only from within the kustomization's root (bases may be elsewhere in the
// tree: treeFS keeps them in it); plugins are builtins only, so no exec, Go
// or container KRM function runs; functions get no exec, network or
// mounts; and helmCharts is off.
func kustomizeOptions() *krusty.Options {
	o := krusty.MakeDefaultOptions()
	o.LoadRestrictions = types.LoadRestrictionsRootOnly
	o.PluginConfig = types.DisabledPluginConfig()
	o.PluginConfig.PluginRestrictions = types.PluginRestrictionsBuiltinsOnly
	o.PluginConfig.BpLoadingOptions = types.BploUseStaticallyLinked
	o.PluginConfig.FnpLoadingOptions = types.FnPluginLoadingOptions{}
	o.PluginConfig.HelmConfig = types.HelmConfig{}
	return o
}

// built is what a build hands back: each resource's YAML, and the inputs
// of Result.
type built struct {
	Resources [][]byte
	Inputs    []string
}

// buildTree runs kustomize on the source directory of the tree at root,
// within limits. It runs in the build process (child.go): krusty takes no
// context, and only a process can be stopped.
func buildTree(root, source string, allow []string, limits Limits) (*built, error) {
	tree, err := newTreeFS(root, allow, limits)
	if err != nil {
		return nil, fmt.Errorf("repository tree: %w", err)
	}
	dir, err := sourceDir(tree, source)
	if err != nil {
		return nil, err
	}
	// Refuse what must not be fetched or read before kustomize starts.
	if err := tree.checkDir(dir, false); err != nil {
		return nil, err
	}
	resMap, err := krusty.MakeKustomizer(kustomizeOptions()).Run(tree, dir)
	if err != nil {
		return nil, err
	}
	kustomization := tree.name(dir) + "/"
	if n := resMap.Size(); n > tree.limits.Objects {
		return nil, fmt.Errorf("%s: %w: the build made %d resources; a build may make %d", kustomization, ErrLimit, n, tree.limits.Objects)
	}
	out := &built{Inputs: tree.inputs()}
	var size int64
	for _, n := range resMap.ToRNodeSlice() {
		s, err := n.String()
		if err != nil {
			return nil, fmt.Errorf("serialize %s %s: %w", n.GetKind(), n.GetName(), err)
		}
		if size += int64(len(s)); size > tree.limits.OutputBytes {
			return nil, fmt.Errorf("%s: %w: the build made more than %d bytes of YAML", kustomization, ErrLimit, tree.limits.OutputBytes)
		}
		out.Resources = append(out.Resources, []byte(s))
	}
	return out, nil
}
