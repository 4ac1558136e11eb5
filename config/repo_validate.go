package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"

	"strata.dev/strata/command"
	"strata.dev/strata/words"
)

// PathChecker answers whether a repo-relative, slash-separated path exists in
// the tree being validated, and whether it is a directory.
type PathChecker interface {
	Stat(path string) (isDir bool, exists bool, err error)
}

// DirFS checks paths in a tree extracted at root. Symbolic links are followed
// only while they stay inside root; one that leaves it is an error.
func DirFS(root string) PathChecker { return dirFS(root) }

type dirFS string

func (d dirFS) Stat(name string) (isDir, exists bool, err error) {
	r, err := os.OpenRoot(string(d))
	if err != nil {
		return false, false, err
	}
	defer r.Close()
	fi, err := r.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	return fi.IsDir(), true, nil
}

// Validate checks what ParseRepo cannot see alone: names are unique and
// usable in commands, paths exist in tree and stay inside the repository,
// globs compile, depends_on names layers without cycles, sync destinations do
// not overlap, and release names are valid for Helm. A nil tree skips the
// existence checks. Problems are returned together as RepoErrors.
func (r *Repo) Validate(tree PathChecker) error {
	v := &repoValidator{repoErrs: repoErrs{file: r.File}, tree: tree}
	if r.Version != 1 {
		v.add(0, "version must be 1, not %d", r.Version)
	}
	v.layers(r.Layers)
	v.syncs(r.Syncs)
	v.promotion(r.Syncs)
	v.releases(r.Releases)
	v.policies(r.Policies, r.Layers)
	return v.err()
}

type repoValidator struct {
	repoErrs
	tree PathChecker
}

func (v *repoValidator) layers(layers []Layer) {
	names := map[string]bool{}
	places := map[string]string{}
	for _, l := range layers {
		where := fmt.Sprintf("layer %q", l.Name)
		v.name(l.Line, "layer", l.Name, names)
		if other, ok := places[l.Dir+"@"+l.Workspace]; ok {
			v.add(l.Line, "%s has the same dir and workspace as layer %q", where, other)
		}
		places[l.Dir+"@"+l.Workspace] = l.Name
		dir, ok := v.path(l.Line, where, "dir", l.Dir, true)
		for _, f := range l.VarFiles {
			if ok {
				v.path(l.Line, where, "var_file", path.Join(dir, f), false)
			}
		}
		for _, g := range l.Autoplan.WhenModified {
			if _, err := repoPath(l.Dir); err != nil {
				break // already reported
			}
			if _, err := repoPath(path.Join(l.Dir, g)); err != nil {
				v.add(l.Line, "when_modified %q of %s: %v", g, where, err)
			} else if !validGlob(g) {
				v.add(l.Line, "when_modified %q of %s is not a valid glob", g, where)
			}
		}
	}
	for _, l := range layers {
		for _, dep := range l.DependsOn {
			if !names[dep] {
				v.add(l.Line, "layer %q depends on %q, which is not a layer", l.Name, dep)
			}
		}
	}
	v.cycles(layers)
}

// cycles reports each depends_on cycle once, at its first layer.
func (v *repoValidator) cycles(layers []Layer) {
	deps, lines := map[string][]string{}, map[string]int{}
	for _, l := range layers {
		deps[l.Name], lines[l.Name] = l.DependsOn, l.Line
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var stack []string
	var visit func(name string)
	visit = func(name string) {
		switch state[name] {
		case visiting:
			i := len(stack) - 1
			for stack[i] != name {
				i--
			}
			cycle := append(append([]string(nil), stack[i:]...), name)
			v.add(lines[name], "depends_on cycle: %s", strings.Join(cycle, " -> "))
			return
		case done:
			return
		}
		state[name] = visiting
		stack = append(stack, name)
		for _, dep := range deps[name] {
			if _, ok := deps[dep]; ok {
				visit(dep)
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = done
	}
	for _, l := range layers {
		visit(l.Name)
	}
}

var (
	ownerRepoRE = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)
	badBranchRE = regexp.MustCompile(`[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//`)
)

// badBranch tells whether b cannot name a Git branch.
func badBranch(b string) bool {
	return b == "" || badBranchRE.MatchString(b) || strings.HasPrefix(b, "-") || strings.HasPrefix(b, "/") ||
		strings.HasSuffix(b, "/") || strings.HasSuffix(b, ".lock")
}

func (v *repoValidator) syncs(syncs []Sync) {
	names := map[string]bool{}
	for i, s := range syncs {
		where := fmt.Sprintf("sync %q", s.Name)
		v.name(s.Line, "sync", s.Name, names)
		if _, err := command.ParseDuration(s.Name); err == nil {
			v.add(s.Line, "%s: a sync name must not read as a duration (it would be ambiguous in /takeover)", where)
		}
		v.path(s.Line, where, "source", s.Source, true)
		if s.Dest.Repo != "" && !ownerRepoRE.MatchString(s.Dest.Repo) {
			v.add(s.Line, "dest repo %q of %s must be owner/name", s.Dest.Repo, where)
		}
		b := s.Dest.Branch
		if badBranch(b) {
			v.add(s.Line, "dest branch %q of %s is not a valid branch name", b, where)
		}
		if _, err := repoPath(s.Dest.Path); err != nil {
			v.add(s.Line, "dest path %q of %s: %v", s.Dest.Path, where, err)
		}
		for _, other := range syncs[:i] {
			if other.Dest.Repo == s.Dest.Repo && other.Dest.Branch == s.Dest.Branch &&
				pathsOverlap(other.Dest.Path, s.Dest.Path) {
				v.add(s.Line, "dest %q of %s overlaps dest %q of sync %q on branch %q",
					s.Dest.Path, where, other.Dest.Path, other.Name, b)
			}
		}
		images := map[string]bool{}
		for _, img := range s.Images {
			if images[img.Name] {
				v.add(s.Line, "image %q appears twice in %s", img.Name, where)
			}
			images[img.Name] = true
		}
		t := s.Takeover
		if t.Default <= 0 || t.Max <= 0 {
			v.add(s.Line, "takeover durations of %s must be positive", where)
		} else if t.Default > t.Max {
			v.add(s.Line, "takeover default %s of %s is longer than its max %s", words.Duration(t.Default), where, words.Duration(t.Max))
		}
	}
}

// Helm release names are DNS-1123 subdomains of at most 53 characters;
// namespaces are DNS-1123 labels.
var (
	helmNameRE  = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	namespaceRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
)

// longestPR is the PR number used to check the length of release names.
const longestPR = 9999999

func (v *repoValidator) releases(releases []Release) {
	names := map[string]bool{}
	installs := map[string]string{}
	for _, r := range releases {
		where := fmt.Sprintf("release %q", r.Name)
		v.name(r.Line, "release", r.Name, names)
		v.path(r.Line, where, "chart", r.Chart, true)
		for _, f := range r.Values {
			v.path(r.Line, where, "values file", f, false)
		}
		if n := r.ReleaseNameFor(longestPR); !helmNameRE.MatchString(n) || len(n) > 53 {
			v.add(r.Line, "release_name %q of %s must give a Helm release name: lowercase letters, digits, '-' and '.', at most 53 characters (%q)",
				r.ReleaseName, where, n)
		}
		if !namespaceRE.MatchString(r.Namespace) || len(r.Namespace) > 63 {
			v.add(r.Line, "namespace %q of %s is not a valid Kubernetes namespace", r.Namespace, where)
		}
		key := r.Cluster + "/" + r.Namespace + "/" + r.ReleaseName
		if other, ok := installs[key]; ok {
			v.add(r.Line, "%s installs the same Helm release as release %q", where, other)
		}
		installs[key] = r.Name
		if r.Test.Timeout <= 0 {
			v.add(r.Line, "test timeout of %s must be positive", where)
		}
		for _, f := range r.Test.Filters {
			if err := command.CheckName(f); err != nil {
				v.add(r.Line, "test filter of %s: %v", where, err)
			}
		}
	}
}

// name checks that a name is unique among its kind and can be typed in a command.
func (v *repoValidator) name(line int, kind, name string, seen map[string]bool) {
	if err := command.CheckName(name); err != nil {
		v.add(line, "%s name %q cannot be used in commands: %v", kind, name, err)
	}
	if seen[name] {
		v.add(line, "%s name %q is used twice", kind, name)
	}
	seen[name] = true
}

// path checks that p stays inside the repository and, with a tree, exists as
// a directory or a file. It returns the cleaned path and whether it is usable.
func (v *repoValidator) path(line int, where, what, p string, wantDir bool) (string, bool) {
	clean, err := repoPath(p)
	if err != nil {
		v.add(line, "%s %q of %s: %v", what, p, where, err)
		return "", false
	}
	if v.tree == nil {
		return clean, true
	}
	isDir, exists, err := v.tree.Stat(clean)
	switch {
	case err != nil:
		v.add(line, "%s %q of %s: %v", what, p, where, err)
	case !exists:
		v.add(line, "%s %q of %s does not exist", what, p, where)
	case wantDir && !isDir:
		v.add(line, "%s %q of %s is not a directory", what, p, where)
	case !wantDir && isDir:
		v.add(line, "%s %q of %s is a directory, not a file", what, p, where)
	default:
		return clean, true
	}
	return clean, false
}

// repoPath cleans a repo-relative path and refuses one that is empty,
// absolute or leaves the repository, even through "a/../../b".
func repoPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("empty path")
	case strings.HasPrefix(p, "/"):
		return "", errors.New("absolute paths are not allowed; paths are relative to the repository root")
	}
	clean := path.Clean(p)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", errors.New("path leaves the repository")
	}
	return clean, nil
}

// pathsOverlap is true when a and b are equal or one is inside the other.
func pathsOverlap(a, b string) bool {
	return a == b || a == "." || b == "." || strings.HasPrefix(b, a+"/") || strings.HasPrefix(a, b+"/")
}
