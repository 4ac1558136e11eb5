package config

import (
	"fmt"
	"path"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// maxRepoFileSize bounds the repo config; a real one is a few kilobytes.
const maxRepoFileSize = 1 << 20

// ParseRepo reads a repo config strictly and applies defaults. Unknown keys,
// wrong types and bad values are reported together as RepoErrors, each with
// the file and line. Paths are cleaned but not checked: that is Validate's job.
//
// The YAML is walked node by node rather than decoded into structs, so that
// every problem can be reported at once and named by its layer, sync or release.
func ParseRepo(filename string, data []byte) (*Repo, error) {
	d := &repoDecoder{repoErrs: repoErrs{file: filename}}
	if len(data) > maxRepoFileSize {
		d.add(0, "file is larger than %d bytes", maxRepoFileSize)
		return nil, d.err()
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		d.addYAML(err)
		return nil, d.err()
	}
	r := &Repo{File: filename}
	if len(doc.Content) == 0 {
		d.add(0, "version: 1 is required")
		return nil, d.err()
	}
	versionSet := false
	d.fields(doc.Content[0], "the file", map[string]fieldFunc{
		"version": func(n *yaml.Node, what string) {
			versionSet = true
			d.integer(&r.Version)(n, what)
			if r.Version != 1 && d.resolve(n).Tag == "!!int" {
				d.add(n.Line, "version must be 1, not %s", n.Value)
			}
		},
		"lock":           d.lockMode(&r.Lock),
		"layers":         d.list(func(n *yaml.Node) { r.Layers = append(r.Layers, d.layer(n)) }),
		"syncs":          d.list(func(n *yaml.Node) { r.Syncs = append(r.Syncs, d.sync(n)) }),
		"releases":       d.list(func(n *yaml.Node) { r.Releases = append(r.Releases, d.release(n)) }),
		"drift":          d.drift(&r.Drift),
		"engine":         d.engine(&r.Engine),
		"policies":       d.list(func(n *yaml.Node) { r.Policies = append(r.Policies, d.policySet(n)) }),
		"auto_apply":     d.autoApply(&r.AutoApply),
		"state":          d.stateMode(&r.State),
		"sync_discovery": d.syncDiscovery(&r.Discovery),
	})
	inheritDrift(r)
	inheritEngine(r)
	if !versionSet {
		d.add(1, "version: 1 is required")
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	defaultLocks(r)
	defaultAutoApply(r)
	defaultStates(r)
	return r, nil
}

func (d *repoDecoder) layer(n *yaml.Node) Layer {
	l := Layer{Line: n.Line, Workspace: DefaultWorkspace, Autoplan: Autoplan{Enabled: true}}
	where := d.where(n, "layer", "name", "dir")
	d.fields(n, where, map[string]fieldFunc{
		"name":      d.str(&l.Name),
		"dir":       d.str(&l.Dir),
		"workspace": d.str(&l.Workspace),
		"var_files": d.strs(&l.VarFiles),
		"autoplan": func(n *yaml.Node, what string) {
			d.fields(n, "autoplan of "+where, map[string]fieldFunc{
				"enabled":       d.boolean(&l.Autoplan.Enabled),
				"when_modified": d.strs(&l.Autoplan.WhenModified),
			})
		},
		"apply_requirements": func(n *yaml.Node, what string) {
			var reqs []string
			d.strs(&reqs)(n, what)
			for _, s := range reqs {
				if req := ApplyRequirement(s); req.Valid() {
					l.ApplyRequirements = appendNew(l.ApplyRequirements, req)
				} else {
					d.add(n.Line, "%s: unknown requirement %q (approved, mergeable, undiverged or codeowners)", what, s)
				}
			}
		},
		"depends_on": d.strs(&l.DependsOn),
		"policies":   d.strs(&l.Policies),
		"engine":     d.engine(&l.Engine),
		"drift":      d.drift(&l.Drift),
		"lock":       d.lockMode(&l.Lock),
		"auto_apply": d.autoApply(&l.AutoApply),
		"state":      d.stateMode(&l.State),
	})
	d.required(n, where, "dir", l.Dir)
	l.Dir = cleanPath(l.Dir)
	if l.Name == "" {
		l.Name = l.Dir
		if l.Workspace != DefaultWorkspace {
			l.Name += "@" + l.Workspace
		}
	}
	if l.Autoplan.WhenModified == nil {
		l.Autoplan.WhenModified = append([]string(nil), DefaultWhenModified...)
	}
	return l
}

var dockerTagRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func (d *repoDecoder) sync(n *yaml.Node) Sync {
	s := Sync{Line: n.Line, Takeover: Takeover{Default: DefaultTakeover, Max: DefaultTakeoverMax}}
	where := d.where(n, "sync", "name")
	d.fields(n, where, map[string]fieldFunc{
		"name":   d.str(&s.Name),
		"source": d.str(&s.Source),
		"dest": func(n *yaml.Node, what string) {
			d.fields(n, "dest of "+where, map[string]fieldFunc{
				"repo":           d.str(&s.Dest.Repo),
				"branch":         d.str(&s.Dest.Branch),
				"path":           d.str(&s.Dest.Path),
				"hydrate_to":     d.str(&s.Dest.HydrateTo),
				"commit_message": d.commitMessage(&s.Dest.CommitMessage, where),
			})
			d.required(n, "dest of "+where, "branch", s.Dest.Branch)
		},
		"images": d.list(func(n *yaml.Node) {
			img := Image{Tag: SourceCommitTag}
			what := "image of " + where
			d.fields(n, what, map[string]fieldFunc{
				"name": d.str(&img.Name),
				"tag":  d.str(&img.Tag),
				"pin":  d.str((*string)(&img.Pin)),
			})
			d.required(n, what, "name", img.Name)
			if img.Tag != SourceCommitTag && !dockerTagRE.MatchString(img.Tag) {
				d.add(n.Line, "tag %q of %s is neither %q nor a valid image tag", img.Tag, what, SourceCommitTag)
			}
			if img.Pin != PinNone && img.Pin != PinDigest {
				d.add(n.Line, "pin %q of %s must be %q or empty", img.Pin, what, PinDigest)
			}
			s.Images = append(s.Images, img)
		}),
		"takeover": func(n *yaml.Node, what string) {
			d.fields(n, "takeover of "+where, map[string]fieldFunc{
				"default": d.duration(&s.Takeover.Default),
				"max":     d.duration(&s.Takeover.Max),
			})
		},
		"validate": d.validateMode(&s.Validate),
	})
	d.required(n, where, "name", s.Name)
	d.required(n, where, "source", s.Source)
	s.Source = cleanPath(s.Source)
	s.Dest.Path = cleanPath(s.Dest.Path)
	if s.Dest.Path == "" {
		s.Dest.Path = "."
	}
	return s
}

func (d *repoDecoder) release(n *yaml.Node) Release {
	r := Release{
		Line:           n.Line,
		Namespace:      DefaultNamespace,
		Test:           ReleaseTest{Timeout: DefaultTestTimeout},
		Remediation:    RemediateNone,
		CleanupOnClose: true,
	}
	where := d.where(n, "release", "name")
	d.fields(n, where, map[string]fieldFunc{
		"name":         d.str(&r.Name),
		"chart":        d.str(&r.Chart),
		"release_name": d.str(&r.ReleaseName),
		"namespace":    d.str(&r.Namespace),
		"values":       d.strs(&r.Values),
		"cluster":      d.str(&r.Cluster),
		"test": func(n *yaml.Node, what string) {
			d.fields(n, "test of "+where, map[string]fieldFunc{
				"timeout": d.duration(&r.Test.Timeout),
				"filters": d.strs(&r.Test.Filters),
			})
		},
		"remediation": func(n *yaml.Node, what string) {
			d.str((*string)(&r.Remediation))(n, what)
			switch r.Remediation {
			case RemediateNone, RemediateRollback, RemediateUninstall:
			default:
				d.add(n.Line, "%s must be none, rollback or uninstall, not %q", what, r.Remediation)
			}
		},
		"cleanup_on_close": d.boolean(&r.CleanupOnClose),
	})
	d.required(n, where, "name", r.Name)
	d.required(n, where, "chart", r.Chart)
	r.Chart = cleanPath(r.Chart)
	if r.ReleaseName == "" {
		r.ReleaseName = fmt.Sprintf(DefaultReleaseTemplate, r.Name)
	}
	return r
}

// cleanPath cleans a non-empty slash path; escapes stay visible ("a/../../b"
// becomes "../b") for Validate to refuse.
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

func appendNew[T comparable](list []T, v T) []T {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
