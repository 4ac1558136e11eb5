package config

// StateMode says who keeps a layer's Terraform state (docs/state.md). It
// is policy: a PR runs with the default branch's (see Effective), so it
// can neither move a layer's state out of Strata nor into it.
type StateMode string

const (
	// StateAuto (no `state:`): Strata keeps the state of a layer that
	// declares no backend; a layer with a backend block keeps it.
	StateAuto StateMode = ""
	// StateManaged: Strata keeps the layer's state; a layer that declares
	// a backend of its own is refused (its state would be in two places).
	StateManaged StateMode = "managed"
	// StateOwn: the layer's own backend, or Terraform's local state (and
	// its workspaces) when it declares none, as before managed state.
	StateOwn StateMode = "own"
)

// stateMode decodes `state: managed|own`.
func (d *repoDecoder) stateMode(p *StateMode) fieldFunc {
	return oneOf(d, p, StateManaged, StateOwn)
}

// defaultStates gives the layers that set no state mode the file's.
func defaultStates(r *Repo) {
	for i := range r.Layers {
		if r.Layers[i].State == StateAuto {
			r.Layers[i].State = r.State
		}
	}
}

// baseState is the state mode of l on the default branch: that of the
// default-branch layer of the same name, else of the same dir and
// workspace, else the default branch's file-wide mode.
func baseState(base *Repo, l *Layer) StateMode {
	for _, b := range base.Layers {
		if b.Name == l.Name {
			return b.State
		}
	}
	for _, b := range base.Layers {
		if b.Dir == l.Dir && b.Workspace == l.Workspace {
			return b.State
		}
	}
	return base.State
}
