package config

// Policy is the server's say over what only a PR defines: a PR may add
// layers, syncs and releases, and what it adds gets the strictest policy,
// never its own.
type Policy struct {
	// ApplyRequirements of a layer only the PR defines (server config
	// default_apply_requirements).
	ApplyRequirements []ApplyRequirement
}

// Effective is the config a PR runs with: the PR branch's layers, syncs and
// releases, with policy taken from the default branch, so that a PR cannot
// loosen the rules it is judged by by editing .strata.yaml.
//
// For an entry the default branch also has, these fields come from the default
// branch:
//   - layer: ApplyRequirements, Lock, AutoApply and State. A layer is the same when its name
//     or its dir and workspace match (all matches count: requirements add up,
//     and on_plan wins over on_apply), so renaming a layer or moving a name
//     to another dir does not drop requirements.
//   - sync (same name): Dest, Takeover and Validate, i.e. where a takeover
//     writes, for how long it may hold it, and whether invalid output blocks.
//   - release (same name): Cluster, Namespace, ReleaseName and
//     CleanupOnClose, i.e. what a PR's chart is installed over, and whether
//     closing the PR uninstalls it.
//
// A layer's Engine is the PR's: it only chooses which of the operator's
// binaries runs the PR's code, which any engine runs the same way.
//
// Entries only on the PR branch get the strictest policy: a layer gets
// p.ApplyRequirements, whatever it asks for, and the default branch's
// file-wide lock mode; a sync is marked Proposed (it
// may be previewed, never taken over or hydrated anywhere); a release has
// no default-branch placement, so /helm-test refuses it. Either config may
// be nil (no file). A PR that deletes the file still runs with the default
// branch's config. The result shares nothing with its arguments.
func Effective(defaultBranch, prBranch *Repo, p Policy) *Repo {
	switch {
	case prBranch == nil && defaultBranch == nil:
		return nil
	case prBranch == nil:
		return cloneRepo(defaultBranch)
	case defaultBranch == nil:
		defaultBranch = &Repo{}
	}
	r := cloneRepo(prBranch)
	r.Policies = clonePolicySets(defaultBranch.Policies)
	r.Discovery = defaultBranch.Discovery
	r.Lock = fileLock(defaultBranch)
	r.AutoApply = defaultBranch.AutoApply
	r.State = defaultBranch.State
	for i := range r.Layers {
		l := &r.Layers[i]
		l.Lock = baseLock(defaultBranch, l)
		l.Policies = basePolicies(defaultBranch.Layers, l)
		l.AutoApply = baseAutoApply(defaultBranch, l)
		l.State = baseState(defaultBranch, l)
		if reqs, found := baseRequirements(defaultBranch.Layers, l); found {
			l.ApplyRequirements = reqs
		} else {
			l.ApplyRequirements = append([]ApplyRequirement(nil), p.ApplyRequirements...)
		}
	}
	for i := range r.Syncs {
		s := &r.Syncs[i]
		s.Proposed, s.Validate = true, ""
		for _, base := range defaultBranch.Syncs {
			if base.Name == s.Name {
				s.Dest, s.Takeover, s.Validate, s.Proposed = base.Dest, base.Takeover, base.Validate, false
			}
		}
	}
	for i := range r.Releases {
		rel := &r.Releases[i]
		for _, base := range defaultBranch.Releases {
			if base.Name == rel.Name {
				rel.Cluster, rel.Namespace, rel.ReleaseName = base.Cluster, base.Namespace, base.ReleaseName
				rel.CleanupOnClose = base.CleanupOnClose
			}
		}
	}
	return r
}

// baseRequirements are the apply requirements of every default-branch layer
// that l is (by name, or by dir and workspace), together: if a PR gives a
// layer's dir another layer's name, it gets the requirements of both.
func baseRequirements(base []Layer, l *Layer) (reqs []ApplyRequirement, found bool) {
	for _, b := range base {
		if b.Name == l.Name || (b.Dir == l.Dir && b.Workspace == l.Workspace) {
			found = true
			for _, req := range b.ApplyRequirements {
				reqs = appendNew(reqs, req)
			}
		}
	}
	return reqs, found
}

func cloneRepo(r *Repo) *Repo {
	c := *r
	c.Drift = cloneDrift(r.Drift)
	c.Layers = append([]Layer(nil), r.Layers...)
	for i := range c.Layers {
		l := &c.Layers[i]
		l.VarFiles = cloneStrings(l.VarFiles)
		l.Autoplan.WhenModified = cloneStrings(l.Autoplan.WhenModified)
		l.ApplyRequirements = append([]ApplyRequirement(nil), l.ApplyRequirements...)
		l.DependsOn = cloneStrings(l.DependsOn)
		l.Policies = clonePoliciesOf(l.Policies)
		l.Drift = cloneDrift(l.Drift)
	}
	c.Policies = clonePolicySets(r.Policies)
	c.Syncs = append([]Sync(nil), r.Syncs...)
	for i := range c.Syncs {
		c.Syncs[i].Images = append([]Image(nil), c.Syncs[i].Images...)
	}
	c.Releases = append([]Release(nil), r.Releases...)
	for i := range c.Releases {
		c.Releases[i].Values = cloneStrings(c.Releases[i].Values)
		c.Releases[i].Test.Filters = cloneStrings(c.Releases[i].Test.Filters)
	}
	return &c
}

func cloneStrings(s []string) []string { return append([]string(nil), s...) }

// RepoPolicy is the server's policy over what only a PR defines.
func (s *Server) RepoPolicy() Policy {
	return Policy{ApplyRequirements: s.DefaultApplyRequirements}
}
