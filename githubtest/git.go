package githubtest

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Deleted, as a file's content in Repo.Commit or Repo.PushPR, deletes the file.
const Deleted = "\x00githubtest:deleted\x00"

// object is a git object. SHAs are real git SHA-1s of the object's encoding.
// Objects are shared by all repositories, as between a repo and its forks.
type object struct {
	kind    string // blob, tree or commit
	data    []byte
	entries []treeEntry
	commit  *commitObject
}

type treeEntry struct{ name, mode, kind, sha string }

type commitObject struct {
	tree    string
	parents []string
	message string
	author  string
	email   string
	date    time.Time
}

// fileEntry is a file in a flattened tree.
type fileEntry struct{ mode, sha string }

func (s *Server) put(o object) string {
	var payload []byte
	switch o.kind {
	case "blob":
		payload = o.data
	case "tree":
		sort.Slice(o.entries, func(i, j int) bool { return treeSortKey(o.entries[i]) < treeSortKey(o.entries[j]) })
		for _, e := range o.entries {
			raw, _ := hex.DecodeString(e.sha)
			payload = append(payload, fmt.Sprintf("%s %s\x00", strings.TrimPrefix(e.mode, "0"), e.name)...)
			payload = append(payload, raw...)
		}
	case "commit":
		c := o.commit
		var b strings.Builder
		fmt.Fprintf(&b, "tree %s\n", c.tree)
		for _, p := range c.parents {
			fmt.Fprintf(&b, "parent %s\n", p)
		}
		sig := fmt.Sprintf("%s <%s> %d +0000", c.author, c.email, c.date.Unix())
		fmt.Fprintf(&b, "author %s\ncommitter %s\n\n%s", sig, sig, c.message)
		payload = []byte(b.String())
	}
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", o.kind, len(payload))
	h.Write(payload)
	sha := hex.EncodeToString(h.Sum(nil))
	s.objects[sha] = o
	return sha
}

func treeSortKey(e treeEntry) string {
	if e.kind == "tree" {
		return e.name + "/"
	}
	return e.name
}

func (s *Server) putBlob(content []byte) string { return s.put(object{kind: "blob", data: content}) }

// flatten lists the files of a tree by full path.
func (s *Server) flatten(treeSHA string) map[string]fileEntry {
	files := map[string]fileEntry{}
	var walk func(sha, prefix string)
	walk = func(sha, prefix string) {
		for _, e := range s.objects[sha].entries {
			if e.kind == "tree" {
				walk(e.sha, prefix+e.name+"/")
			} else {
				files[prefix+e.name] = fileEntry{mode: e.mode, sha: e.sha}
			}
		}
	}
	walk(treeSHA, "")
	return files
}

// buildTree stores the trees for a set of files and returns the root's SHA.
func (s *Server) buildTree(files map[string]fileEntry) string {
	dirs := map[string][]treeEntry{"": nil}
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		f := files[p]
		dir, name := path.Split(p)
		dir = strings.TrimSuffix(dir, "/")
		dirs[dir] = append(dirs[dir], treeEntry{name: name, mode: f.mode, kind: "blob", sha: f.sha})
		for d := dir; d != ""; d = path.Dir(d) {
			if _, ok := dirs[d]; !ok {
				dirs[d] = nil
			}
			if path.Dir(d) == "." {
				break
			}
		}
	}
	// Deepest directories first, so that each parent sees its children's SHAs.
	var order []string
	for d := range dirs {
		order = append(order, d)
	}
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(order, func(i, j int) bool { return depth(order[i]) > depth(order[j]) })
	shas := map[string]string{}
	for _, d := range order {
		shas[d] = s.put(object{kind: "tree", entries: dirs[d]})
		if d == "" {
			continue
		}
		parent := path.Dir(d)
		if parent == "." {
			parent = ""
		}
		dirs[parent] = append(dirs[parent], treeEntry{name: path.Base(d), mode: "040000", kind: "tree", sha: shas[d]})
	}
	return shas[""]
}

func (s *Server) putCommit(tree string, parents []string, message, author string) string {
	return s.put(object{kind: "commit", commit: &commitObject{
		tree: tree, parents: parents, message: message, author: author,
		email: author + "@users.noreply.github.test", date: now(),
	}})
}

func (s *Server) commitObj(sha string) *commitObject {
	if o, ok := s.objects[sha]; ok && o.kind == "commit" {
		return o.commit
	}
	return nil
}

// commitFiles lists the files of a commit, or nil when there is no such commit.
func (s *Server) commitFiles(sha string) map[string]fileEntry {
	c := s.commitObj(sha)
	if c == nil {
		return nil
	}
	return s.flatten(c.tree)
}

// ancestors returns a commit and all its ancestors.
func (s *Server) ancestors(sha string) map[string]bool {
	seen := map[string]bool{}
	queue := []string{sha}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if c == "" || seen[c] {
			continue
		}
		seen[c] = true
		if o := s.commitObj(c); o != nil {
			queue = append(queue, o.parents...)
		}
	}
	return seen
}

// mergeBase is the nearest common ancestor of two commits, or "".
func (s *Server) mergeBase(a, b string) string {
	inA := s.ancestors(a)
	queue := []string{b}
	seen := map[string]bool{}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		if inA[c] {
			return c
		}
		if o := s.commitObj(c); o != nil {
			queue = append(queue, o.parents...)
		}
	}
	return ""
}

// applyFiles commits file changes (Deleted removes a file) on top of parent.
func (s *Server) applyFiles(parent string, files map[string]string, message, author string) string {
	tree := map[string]fileEntry{}
	if parent != "" {
		tree = s.commitFiles(parent)
	}
	for p, content := range files {
		p = strings.Trim(p, "/")
		if content == Deleted {
			delete(tree, p)
			continue
		}
		tree[p] = fileEntry{mode: "100644", sha: s.putBlob([]byte(content))}
	}
	var parents []string
	if parent != "" {
		parents = []string{parent}
	}
	return s.putCommit(s.buildTree(tree), parents, message, author)
}

// resolve turns a ref (SHA, short SHA, branch, tag, heads/x, refs/heads/x)
// into a commit SHA. Callers hold s.mu.
func (r *Repo) resolve(ref string) (string, bool) {
	ref = strings.TrimPrefix(ref, "refs/")
	for _, name := range []string{ref, "heads/" + ref, "tags/" + ref} {
		if sha, ok := r.refs[name]; ok {
			return sha, true
		}
	}
	if len(ref) == 40 && r.s.commitObj(ref) != nil {
		return ref, true
	}
	if len(ref) >= 7 && len(ref) < 40 {
		for sha, o := range r.s.objects {
			if o.kind == "commit" && strings.HasPrefix(sha, ref) {
				return sha, true
			}
		}
	}
	return "", false
}

// Commit adds a commit on branch with the files changed (content Deleted
// removes a file) and moves the branch to it. A new branch starts from the
// default branch. It returns the commit's SHA.
func (r *Repo) Commit(branch string, files map[string]string, message string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.commit(branch, files, message, r.Owner)
}

func (r *Repo) commit(branch string, files map[string]string, message, author string) string {
	parent, ok := r.refs["heads/"+branch]
	if !ok {
		parent = r.refs["heads/"+r.defaultBranch]
	}
	sha := r.s.applyFiles(parent, files, message, author)
	r.refs["heads/"+branch] = sha
	return sha
}

// Branch returns the SHA a branch points to, or "" when it does not exist.
func (r *Repo) Branch(name string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.refs["heads/"+name]
}

// SetBranch points a branch at a commit, as a force push would.
func (r *Repo) SetBranch(name, sha string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.refs["heads/"+name] = sha
}

// FileAt returns a file's content at a ref.
func (r *Repo) FileAt(ref, path string) (string, bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	sha, ok := r.resolve(ref)
	if !ok {
		return "", false
	}
	f, ok := r.s.commitFiles(sha)[strings.Trim(path, "/")]
	if !ok {
		return "", false
	}
	return string(r.s.objects[f.sha].data), true
}

// Tree returns every file at a ref, by path, or nil for an unknown ref.
func (r *Repo) Tree(ref string) map[string]string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	sha, ok := r.resolve(ref)
	if !ok {
		return nil
	}
	out := map[string]string{}
	for p, f := range r.s.commitFiles(sha) {
		out[p] = string(r.s.objects[f.sha].data)
	}
	return out
}
