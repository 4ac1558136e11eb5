package config

// Effective is the config a PR runs with: the PR branch's layers, syncs and
// releases, with policy taken from the default branch, so that a PR cannot
// loosen the rules it is judged by by editing .strata.yaml.
//
// For an entry the default branch also has, these fields come from the default
// branch:
//   - layer: ApplyRequirements. A layer is the same when its name or its dir
//     and workspace match (all matches count), so renaming a layer or moving
//     a name to another dir does not drop requirements.
//   - sync (same name): Dest and Takeover, i.e. where a takeover writes and for
//     how long it may hold it.
//   - release (same name): Cluster, Namespace and ReleaseName, i.e. what a PR's
//     chart is installed over.
//
// Entries only on the PR branch are taken as written: they have no policy on
// the default branch to keep. Either config may be nil (no file). A PR that
// deletes the file still runs with the default branch's config.
// The result shares nothing with its arguments.
func Effective(defaultBranch, prBranch *Repo) *Repo {
	switch {
	case prBranch == nil && defaultBranch == nil:
		return nil
	case prBranch == nil:
		return cloneRepo(defaultBranch)
	case defaultBranch == nil:
		return cloneRepo(prBranch)
	}
	r := cloneRepo(prBranch)
	for i := range r.Layers {
		l := &r.Layers[i]
		if reqs, found := baseRequirements(defaultBranch.Layers, l); found {
			l.ApplyRequirements = reqs
		}
	}
	for i := range r.Syncs {
		s := &r.Syncs[i]
		for _, base := range defaultBranch.Syncs {
			if base.Name == s.Name {
				s.Dest, s.Takeover = base.Dest, base.Takeover
			}
		}
	}
	for i := range r.Releases {
		rel := &r.Releases[i]
		for _, base := range defaultBranch.Releases {
			if base.Name == rel.Name {
				rel.Cluster, rel.Namespace, rel.ReleaseName = base.Cluster, base.Namespace, base.ReleaseName
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
	c.Layers = append([]Layer(nil), r.Layers...)
	for i := range c.Layers {
		l := &c.Layers[i]
		l.VarFiles = cloneStrings(l.VarFiles)
		l.Autoplan.WhenModified = cloneStrings(l.Autoplan.WhenModified)
		l.ApplyRequirements = append([]ApplyRequirement(nil), l.ApplyRequirements...)
		l.DependsOn = cloneStrings(l.DependsOn)
	}
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
