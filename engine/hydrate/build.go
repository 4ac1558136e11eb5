package hydrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
)

// ErrTimeout is a build that did not finish within Input.Timeout.
var ErrTimeout = errors.New("build timed out")

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

// build runs kustomize on dir within timeout (DefaultTimeout when zero) and
// ctx. krusty takes no context, so the build runs in a goroutine that is
// abandoned, not stopped, when time is up: it may still wait on a fetch the
// server allows (git has kustomize's own timeout, HTTP none) or read the
// tree, and its result is dropped.
func build(parent context.Context, tree *treeFS, dir string, timeout time.Duration) (resmap.ResMap, error) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	type result struct {
		m   resmap.ResMap
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := krusty.MakeKustomizer(kustomizeOptions()).Run(tree, dir)
		done <- result{m, err}
	}()
	select {
	case r := <-done:
		return r.m, r.err
	case <-ctx.Done():
		if parent.Err() != nil {
			return nil, parent.Err() // the job's end, not the build's fault
		}
		return nil, fmt.Errorf("kustomize build did not finish within %s: make it faster (a remote base?), or ask the operator for a longer server config hydrate.timeout: %w",
			timeout, ErrTimeout)
	}
}
