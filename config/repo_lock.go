package config

// LockMode says when a PR takes a layer's lock. It is policy: a PR runs
// with the mode of the default branch (see Effective), so it can neither
// switch a layer to on_apply to plan past another PR's lock, nor to on_plan
// to grab locks that others' plans would then run into.
type LockMode string

const (
	// LockOnPlan: a plan takes the lock, and other PRs can neither plan nor
	// apply the layer until the holder is merged or closed. The default.
	LockOnPlan LockMode = "on_plan"
	// LockOnApply: plans take no lock and never block each other; the first
	// /apply takes it and holds it until its PR is merged or closed. An
	// apply makes the other PRs' plans of the layer stale.
	LockOnApply LockMode = "on_apply"
)

// LocksOnApply reports whether the layer's lock is taken by /apply rather
// than by a plan. A layer without a mode (one discovered without
// .strata.yaml) locks on plan.
func (l *Layer) LocksOnApply() bool { return l.Lock == LockOnApply }

// lockMode decodes `lock: on_plan|on_apply`.
func (d *repoDecoder) lockMode(p *LockMode) fieldFunc {
	return oneOf(d, p, LockOnPlan, LockOnApply)
}

// defaultLocks gives the layers that set no lock mode the file's; without
// either, it stays empty, which is on_plan.
func defaultLocks(r *Repo) {
	for i := range r.Layers {
		if r.Layers[i].Lock == "" {
			r.Layers[i].Lock = r.Lock
		}
	}
}

// baseLock is the lock mode of l on the default branch: that of every
// default-branch layer l is (by name, or by dir and workspace), on_plan if
// any of them locks on plan; a layer only the PR defines gets the default
// branch's file-wide mode.
func baseLock(base *Repo, l *Layer) LockMode {
	onApply, found := true, false
	for _, b := range base.Layers {
		if b.Name == l.Name || (b.Dir == l.Dir && b.Workspace == l.Workspace) {
			found = true
			onApply = onApply && b.LocksOnApply()
		}
	}
	if !found {
		return fileLock(base)
	}
	if onApply {
		return LockOnApply
	}
	return LockOnPlan
}

// fileLock is the file-wide lock mode of the default branch's file.
func fileLock(base *Repo) LockMode {
	if base.Lock == LockOnApply {
		return LockOnApply
	}
	return LockOnPlan
}
