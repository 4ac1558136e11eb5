package layers

import (
	"context"
	"fmt"
	"io"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
	"strata.dev/strata/tfstate"
	"strata.dev/strata/worker"
)

// stateUse is who keeps a layer's state in a run (docs/state.md): Strata
// (Managed), the layer's own backend, or nobody because the run is
// refused (Refuse says why, to the user). Note is said in the run's log.
type stateUse struct {
	Managed bool
	Refuse  string
	Note    string
}

// stateUseOf decides who keeps a layer's state from its `state:` mode
// (the default branch's), whether the layer declares a backend, and
// whether the server keeps state at all.
func stateUseOf(layer string, mode config.StateMode, declaresBackend, serverOff bool) stateUse {
	switch {
	case mode == config.StateOwn:
		return stateUse{}
	case mode == config.StateManaged && declaresBackend:
		return stateUse{Refuse: fmt.Sprintf("layer %s declares a backend, and .strata.yaml on the default branch says `state: managed`: "+
			"remove the backend block (after moving its state into Strata, see docs/state.md), or set `state: own`", markdown.Quote(layer))}
	case declaresBackend:
		return stateUse{Note: "state: the layer's own backend (it declares one)"}
	case mode == config.StateManaged && serverOff:
		return stateUse{Refuse: fmt.Sprintf("layer %s says `state: managed`, but this server keeps no state (state.addr is off): "+
			"ask its operator to turn it on, or set `state: own`", markdown.Quote(layer))}
	case serverOff:
		return stateUse{Note: "state: none kept: the layer declares no backend and this server keeps no state (state.addr is off); " +
			"what an apply creates is not remembered by the next run"}
	}
	return stateUse{Managed: true}
}

// managedState gives a run of layer l (in dir, its copy of the tree) its
// state credential when Strata keeps the layer's state: read for plans
// (and drift), write for applies. The credential lives while the run holds
// the layer's slot; done revokes it and frees any state lock the run left
// (Terraform killed before it unlocked).
func managedState(ctx context.Context, d *worker.Deps, repo jobs.Repo, l jobs.LayerSpec, dir, mode string, log io.Writer) (*terraform.HTTPState, func(), error) {
	declares, err := terraform.DeclaresBackend(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("layer %s: %w", l.Name, err)
	}
	use := stateUseOf(l.Name, config.StateMode(l.State), declares, d.StateURL == "")
	if use.Refuse != "" {
		return nil, nil, fmt.Errorf("%s", use.Refuse)
	}
	if !use.Managed {
		fmt.Fprintf(log, "[strata] %s\n", use.Note)
		return nil, func() {}, nil
	}
	runID := worker.RunID(ctx)
	key := store.StateKey{Repo: repo.FullName, Layer: l.Name, Workspace: l.Workspace}
	cred, err := tfstate.Issue(ctx, d.Store, d.StateURL, key, runID, mode)
	if err != nil {
		return nil, nil, err
	}
	if m, ok := log.(interface{ Mask(...string) }); ok {
		m.Mask(cred.Password)
	}
	done := func() {
		if err := tfstate.Revoke(context.WithoutCancel(ctx), d.Store, runID); err != nil {
			worker.Warn(ctx, err, "revoke the run's state credential")
		}
	}
	return &terraform.HTTPState{Address: cred.Address, Username: cred.Username, Password: cred.Password}, done, nil
}
