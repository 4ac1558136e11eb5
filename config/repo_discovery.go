package config

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SyncDiscovery finds syncs in files across the repository, as hydros'
// RepoConfig does, besides the `syncs:` of .strata.yaml:
//
//	sync_discovery:
//	  globs: ["**/strata-sync.yaml"]
//	  selector: {matchLabels: {env: dev}, matchExpressions: [{key: tier, operator: In, values: [web]}]}
//
// It is read from the default branch only (see worker.LoadRepoConfig): a PR
// may add Sync files, which it previews, but not change which files count.
type SyncDiscovery struct {
	// Globs are repo-relative slash patterns: path.Match per segment, and
	// "**" as a whole segment for any number of directories.
	Globs []string
	// Selector keeps the Sync files whose metadata.labels match, with
	// Kubernetes' label-selector semantics; nil (no selector) keeps all.
	Selector labels.Selector
	Line     int
}

// Sync files: one or more YAML documents of this kind.
const (
	SyncAPIVersion = "strata.dev/v1"
	SyncKind       = "Sync"
	// MaxSyncFiles bounds the files discovery reads at one commit (each
	// is one GitHub request).
	MaxSyncFiles = 200
	maxGlobs     = 20
)

func (d *repoDecoder) syncDiscovery(p **SyncDiscovery) fieldFunc {
	return func(n *yaml.Node, what string) {
		disc := &SyncDiscovery{Line: n.Line}
		d.fields(n, "sync_discovery", map[string]fieldFunc{
			"globs": func(n *yaml.Node, what string) {
				d.strs(&disc.Globs)(n, what)
				for _, g := range disc.Globs {
					if err := checkDiscoveryGlob(g); err != nil {
						d.add(n.Line, "glob %q of sync_discovery: %v", g, err)
					}
				}
				if len(disc.Globs) > maxGlobs {
					d.add(n.Line, "sync_discovery has %d globs; at most %d", len(disc.Globs), maxGlobs)
				}
			},
			"selector": func(n *yaml.Node, what string) { disc.Selector = d.labelSelector(n, "selector of sync_discovery") },
		})
		if len(disc.Globs) == 0 && d.resolve(n).Kind == yaml.MappingNode {
			d.add(n.Line, "sync_discovery needs \"globs\", such as [\"**/strata-sync.yaml\"]")
		}
		*p = disc
	}
}

// checkDiscoveryGlob refuses a glob that could match nothing in the tree or
// reach outside it.
func checkDiscoveryGlob(g string) error {
	switch {
	case g == "":
		return fmt.Errorf("empty glob")
	case strings.HasPrefix(g, "/"):
		return fmt.Errorf("globs are relative to the repository root; remove the leading /")
	case !validGlob(g):
		return fmt.Errorf("not a valid pattern (path.Match syntax per segment, ** for any directories)")
	}
	for _, seg := range strings.Split(g, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return fmt.Errorf("segments . .. and empty ones are not allowed: a glob stays inside the repository")
		}
	}
	return nil
}

// labelSelector reads a Kubernetes LabelSelector and compiles it with
// apimachinery, whose messages name the bad key or operator.
func (d *repoDecoder) labelSelector(n *yaml.Node, where string) labels.Selector {
	var ls metav1.LabelSelector
	d.fields(n, where, map[string]fieldFunc{
		"matchLabels": func(n *yaml.Node, what string) {
			ls.MatchLabels = map[string]string{}
			d.stringMap(ls.MatchLabels)(n, what)
		},
		"matchExpressions": d.list(func(n *yaml.Node) {
			var e metav1.LabelSelectorRequirement
			what := "a matchExpression of " + where
			d.fields(n, what, map[string]fieldFunc{
				"key":      d.str(&e.Key),
				"operator": d.str((*string)(&e.Operator)),
				"values":   d.strs(&e.Values),
			})
			ls.MatchExpressions = append(ls.MatchExpressions, e)
		}),
	})
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil {
		d.add(n.Line, "%s: %v", where, err)
		return nil
	}
	return sel
}

// stringMap reads a mapping of strings to strings (labels).
func (d *repoDecoder) stringMap(m map[string]string) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.MappingNode {
			d.add(n.Line, "%s must be a mapping, not %s", what, describe(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			var k, v string
			d.str(&k)(n.Content[i], "a key of "+what)
			d.str(&v)(n.Content[i+1], fmt.Sprintf("%q in %s", k, what))
			m[k] = v
		}
	}
}

// Candidates are the paths of the files (not directories) of a tree that
// one of the globs matches, sorted.
func (disc *SyncDiscovery) Candidates(tree map[string]bool) []string {
	var out []string
	for p, isDir := range tree {
		if isDir {
			continue
		}
		name := strings.Split(p, "/")
		for _, g := range disc.Globs {
			if matchGlob(strings.Split(g, "/"), name) {
				out = append(out, p)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// SyncFile is a file discovery read: its repo-relative path and content.
type SyncFile struct {
	Path string
	Data []byte
}

// DiscoveredSync is a sync a Sync file defines, with its labels.
type DiscoveredSync struct {
	Sync   Sync
	Labels map[string]string
}

// SyncFileProblem is a Sync file that discovery could not use, with the
// sync's name when the file says it (the check it is reported on).
type SyncFileProblem struct {
	Sync string
	*RepoError
}

// ParseSyncFile reads the Sync documents of one file strictly, as ParseRepo
// reads .strata.yaml: unknown keys, wrong types and bad values are
// RepoErrors with the file and line. A spec is a `syncs:` entry whose name
// is metadata.name; its source is relative to the file's directory.
func ParseSyncFile(file string, data []byte) ([]DiscoveredSync, error) {
	d := &repoDecoder{repoErrs: repoErrs{file: file}}
	if len(data) > maxRepoFileSize {
		d.add(0, "file is larger than %d bytes", maxRepoFileSize)
		return nil, d.err()
	}
	var out []DiscoveredSync
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err != nil {
			if err.Error() != "EOF" {
				d.addYAML(err)
			}
			break
		}
		if len(doc.Content) == 0 {
			continue
		}
		if s, ok := d.syncDocument(doc.Content[0], path.Dir(file)); ok {
			out = append(out, s)
		}
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, RepoErrors{{File: file, Msg: "no Sync document (apiVersion: " + SyncAPIVersion + ", kind: " + SyncKind + ")"}}
	}
	return out, nil
}

func (d *repoDecoder) syncDocument(n *yaml.Node, dir string) (DiscoveredSync, bool) {
	var apiVersion, kind, name string
	var spec *yaml.Node
	labels := map[string]string{}
	before := len(d.repoErrs.list)
	d.fields(n, "the document", map[string]fieldFunc{
		"apiVersion": d.str(&apiVersion),
		"kind":       d.str(&kind),
		"metadata": func(n *yaml.Node, what string) {
			d.fields(n, "metadata", map[string]fieldFunc{
				"name":   d.str(&name),
				"labels": d.stringMap(labels),
			})
		},
		"spec": func(n *yaml.Node, what string) { spec = d.resolve(n) },
	})
	switch {
	case apiVersion != SyncAPIVersion:
		d.add(n.Line, "apiVersion must be %s, not %q", SyncAPIVersion, apiVersion)
	case kind != SyncKind:
		d.add(n.Line, "kind must be %s, not %q", SyncKind, kind)
	case name == "":
		d.add(n.Line, "metadata.name is required")
	case spec == nil:
		d.add(n.Line, "spec is required: a sync as in the syncs of %s (source, dest, ...)", RepoFile)
	case spec.Kind != yaml.MappingNode:
		d.add(spec.Line, "spec must be a mapping, not %s", describe(spec))
	}
	if len(d.repoErrs.list) > before {
		return DiscoveredSync{}, false
	}
	for i := 0; i+1 < len(spec.Content); i += 2 {
		if spec.Content[i].Value == "name" {
			d.add(spec.Content[i].Line, "the sync's name is metadata.name, not spec.name")
			return DiscoveredSync{}, false
		}
	}
	// The spec is a syncs: entry named by metadata.name: the same decoder
	// reads it, so both say the same about the same mistake.
	named := *spec
	named.Content = append([]*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: spec.Line},
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: spec.Line},
	}, spec.Content...)
	s := d.sync(&named)
	if s.Source != "" && !strings.HasPrefix(s.Source, "/") {
		s.Source = path.Join(dir, s.Source)
	}
	s.Line = n.Line
	return DiscoveredSync{Sync: s, Labels: labels}, len(d.repoErrs.list) == before
}

// Discovered is what discovery found at one commit: the syncs kept, the
// files the selector left out, and the files it could not use.
type Discovered struct {
	Syncs []Sync
	// Skipped are "name (file)" of the syncs the selector left out.
	Skipped  []string
	Problems []SyncFileProblem
}

// Discover decides which syncs the Sync files define: those whose labels
// the selector matches, that parse, validate against tree, and clash with
// no sync of listed (the `syncs:` of file) nor with one of an earlier file
// (files in path order), by name or by destination. A bad file is reported
// alone; the others are kept. files are in path order.
func Discover(disc *SyncDiscovery, file string, listed []Sync, files []SyncFile, tree PathChecker) Discovered {
	var out Discovered
	type origin struct {
		file string
		line int
	}
	taken := map[string]origin{}
	all := append([]Sync(nil), listed...)
	for _, s := range listed {
		taken[s.Name] = origin{file, s.Line}
	}
	problem := func(sync, file string, line int, format string, args ...any) {
		out.Problems = append(out.Problems, SyncFileProblem{Sync: sync, RepoError: &RepoError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}})
	}
	for _, f := range files {
		found, err := ParseSyncFile(f.Path, f.Data)
		if errs, ok := err.(RepoErrors); ok {
			for _, e := range errs {
				out.Problems = append(out.Problems, SyncFileProblem{Sync: nameIn(f.Data), RepoError: e})
			}
			continue
		}
		for _, ds := range found {
			s := ds.Sync
			if disc.Selector != nil && !disc.Selector.Matches(labels.Set(ds.Labels)) {
				out.Skipped = append(out.Skipped, s.Name+" ("+f.Path+")")
				continue
			}
			s.File = f.Path
			if o, ok := taken[s.Name]; ok {
				// Reported under the file's path: the name is the other
				// sync's, whose check this must not take.
				problem("", f.Path, s.Line, "sync %q is also defined at %s:%d; rename one of them", s.Name, o.file, o.line)
				continue
			}
			if err := (&Repo{File: f.Path, Version: 1, Syncs: []Sync{s}}).Validate(tree); err != nil {
				for _, e := range err.(RepoErrors) {
					problem(s.Name, e.File, e.Line, "%s", e.Msg)
				}
				continue
			}
			if o := overlapping(all, s); o != nil {
				where := file
				if o.File != "" {
					where = o.File
				}
				problem(s.Name, f.Path, s.Line, "dest %q of sync %q overlaps dest %q of sync %q (%s:%d) on branch %q",
					s.Dest.Path, s.Name, o.Dest.Path, o.Name, where, o.Line, s.Dest.Branch)
				continue
			}
			taken[s.Name] = origin{f.Path, s.Line}
			all = append(all, s)
			out.Syncs = append(out.Syncs, s)
		}
	}
	return out
}

func overlapping(syncs []Sync, s Sync) *Sync {
	for i, o := range syncs {
		if o.Dest.Repo == s.Dest.Repo && o.Dest.Branch == s.Dest.Branch && pathsOverlap(o.Dest.Path, s.Dest.Path) {
			return &syncs[i]
		}
	}
	return nil
}

// nameIn is metadata.name of a file's first document when it can be read
// at all, so that a bad file's problem shows on its sync's check.
func nameIn(data []byte) string {
	var doc struct {
		Metadata struct {
			Name string `yaml:"name"`
		} `yaml:"metadata"`
	}
	if yaml.Unmarshal(data, &doc) != nil {
		return ""
	}
	return doc.Metadata.Name
}
