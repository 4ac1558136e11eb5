// Package hydrate renders a sync's kustomization into plain manifests: a
// kustomize build over the repository tree at one commit, in a child
// process that is killed when it takes too long (child.go) and bounded
// (limits.go), then kyaml filters for image tags, digests and the
// source-commit annotation.
// It knows nothing of GitHub: the caller fetches the tree and commits Files.
package hydrate

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// SourceCommitAnnotation is set on every hydrated resource.
const SourceCommitAnnotation = "strata.dev/source-commit"

// SyncStateFile is written next to the resources under dest.path.
const SyncStateFile = ".strata-sync.yaml"

// Image rule values from .strata.yaml.
const (
	TagSourceCommit = "source-commit"
	PinDigest       = "digest"
)

// ImageRule rewrites the references to one image in the hydrated resources.
type ImageRule struct {
	Name string // image name without tag or digest, e.g. ghcr.io/acme/api
	Tag  string // new tag; TagSourceCommit means the source commit SHA; "" keeps the tag
	Pin  string // PinDigest resolves the tag to a digest through the Resolver
}

// Resolver resolves an image reference (name:tag) to its digest (sha256:...).
type Resolver interface {
	Digest(ctx context.Context, ref string) (string, error)
}

// Input is one sync to hydrate at one commit.
type Input struct {
	Sync         string // the sync's name, for errors
	Root         string // absolute path of the extracted repository tree
	Source       string // repo-relative kustomization directory
	SourceRepo   string // owner/name
	SourceCommit string // the SHA the tree was fetched at
	Images       []ImageRule
	Resolver     Resolver // needed when a rule pins a digest
	// AllowRemote lists the remote resources, bases and components
	// kustomize may fetch, as host/path patterns (github.com/acme/*, each
	// segment matched with path.Match); every other remote reference is
	// refused before the build. The server config's hydrate.allow_remote.
	AllowRemote []string
	// Timeout bounds the build; DefaultTimeout when zero.
	Timeout time.Duration
	// Limits bound what the build may use; DefaultLimits where zero.
	Limits Limits
}

// DefaultTimeout bounds a build when Input.Timeout is zero.
const DefaultTimeout = 5 * time.Minute

// Result is the hydrated output of one sync.
type Result struct {
	// Files maps file names (relative to dest.path) to their content: one
	// YAML file per resource plus SyncStateFile.
	Files map[string][]byte
	// Inputs lists, sorted and repo-relative, every file kustomize read or
	// looked for, and every directory it listed (with a trailing "/").
	Inputs    []string
	Resources int
	Kinds     []string // distinct kinds, sorted
	Pinned    []PinnedImage
	State     SyncState // what SyncStateFile holds

	// nodes are the resources as Files holds them, for FilesAt.
	nodes []*yaml.RNode
}

// FilesAt is Files as a hydration of the same output from commit would
// write them: every resource annotated with commit, and SyncStateFile
// naming it, the rest (image tags included) as they are. A destination that
// holds exactly these holds this output already, only named after an older
// source commit.
func (r *Result) FilesAt(commit string) (map[string][]byte, error) {
	nodes := make([]*yaml.RNode, len(r.nodes))
	for i, n := range r.nodes {
		nodes[i] = n.Copy()
	}
	nodes, err := annotate(SourceCommitAnnotation, commit).Filter(nodes)
	if err != nil {
		return nil, err
	}
	files, _, err := layout(nodes)
	if err != nil {
		return nil, err
	}
	state := r.State
	state.SourceCommit = commit
	files[SyncStateFile] = state.Marshal()
	return files, nil
}

// PinnedImage is an image whose tag was resolved to a digest.
type PinnedImage struct {
	Name   string `json:"name"`
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
}

// Error is a hydration that failed because of its input: a source outside the
// tree, a kustomization that does not build, an image that does not resolve.
// Err carries kustomize's own message.
type Error struct {
	Sync   string
	Source string
	Err    error
}

func (e *Error) Error() string {
	if e.Sync == "" {
		return fmt.Sprintf("hydrate %s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("hydrate sync %q (%s): %v", e.Sync, e.Source, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Hydrate builds in.Source with kustomize, applies the image rules and the
// source-commit annotation, and lays the resources out as files.
func Hydrate(ctx context.Context, in Input) (*Result, error) {
	res, err := hydrate(ctx, in)
	if err != nil {
		return nil, &Error{Sync: in.Sync, Source: in.Source, Err: err}
	}
	return res, nil
}

func hydrate(ctx context.Context, in Input) (*Result, error) {
	b, err := build(ctx, in)
	if err != nil {
		return nil, err
	}
	nodes := make([]*yaml.RNode, 0, len(b.Resources))
	for _, r := range b.Resources {
		n, err := yaml.Parse(string(r))
		if err != nil {
			return nil, fmt.Errorf("reading the build's output: %w", err)
		}
		nodes = append(nodes, n)
	}

	images := &imageFilter{ctx: ctx, rules: in.Images, commit: in.SourceCommit, resolver: in.Resolver}
	for _, f := range []kio.Filter{images, annotate(SourceCommitAnnotation, in.SourceCommit)} {
		if nodes, err = f.Filter(nodes); err != nil {
			return nil, err
		}
	}

	files, kinds, err := layout(nodes)
	if err != nil {
		return nil, err
	}
	state := SyncState{
		SourceRepo:   in.SourceRepo,
		Source:       in.Source,
		SourceCommit: in.SourceCommit,
		Pinned:       images.pinned(),
	}
	files[SyncStateFile] = state.Marshal()
	return &Result{
		Files:     files,
		Inputs:    b.Inputs,
		Resources: len(nodes),
		Kinds:     kinds,
		Pinned:    state.Pinned,
		State:     state,
		nodes:     nodes,
	}, nil
}

// sourceDir checks that source names a directory inside the tree, also once
// symlinks are followed, and returns its absolute path.
func sourceDir(tree *treeFS, source string) (string, error) {
	s := filepath.ToSlash(source)
	if s == "" || path.IsAbs(s) || filepath.IsAbs(source) {
		return "", fmt.Errorf("source %q must be a path relative to the repository root", source)
	}
	clean := path.Clean(s)
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("source %q: %w", source, ErrOutsideRoot)
	}
	dir, err := tree.resolve(filepath.Join(tree.root, filepath.FromSlash(clean)))
	if err != nil {
		return "", fmt.Errorf("source %q: %w", source, err)
	}
	if !tree.disk.IsDir(dir) {
		return "", fmt.Errorf("source %q is not a directory in the repository", source)
	}
	return dir, nil
}

var errNoResolver = errors.New("an image rule pins a digest but no resolver was given")
