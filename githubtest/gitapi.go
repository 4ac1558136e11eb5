package githubtest

import (
	"encoding/base64"
	"net/http"
	"sort"
	"strings"
)

// The Git database API: blobs, trees, commits and refs.

func (c *call) blobJSON(sha string) map[string]any {
	data := c.s.objects[sha].data
	return map[string]any{
		"sha": sha, "node_id": "B_" + sha[:12], "size": len(data), "encoding": "base64",
		"content": base64.StdEncoding.EncodeToString(data),
		"url":     c.s.APIURL() + "repos/" + c.repo.FullName() + "/git/blobs/" + sha,
	}
}

func (s *Server) createBlob(c *call) {
	content := []byte(c.str("content"))
	if c.str("encoding") == "base64" {
		dec, err := base64.StdEncoding.DecodeString(c.str("content"))
		if err != nil {
			c.invalid("content is not valid Base64")
			return
		}
		content = dec
	}
	sha := s.putBlob(content)
	c.json(http.StatusCreated, map[string]any{"sha": sha, "url": c.s.APIURL() + "repos/" + c.repo.FullName() + "/git/blobs/" + sha})
}

func (s *Server) getBlob(c *call) {
	sha := c.params["file_sha"]
	if o, ok := s.objects[sha]; !ok || o.kind != "blob" {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.blobJSON(sha))
}

func (s *Server) createTree(c *call) {
	files := map[string]fileEntry{}
	if base := c.str("base_tree"); base != "" {
		if cm := s.commitObj(base); cm != nil {
			base = cm.tree // GitHub peels a commit to its tree
		}
		if o, ok := s.objects[base]; !ok || o.kind != "tree" {
			c.invalid("base_tree is not a valid tree SHA")
			return
		}
		files = s.flatten(base)
	}
	entries, _ := c.body["tree"].([]any)
	for _, e := range entries {
		m, _ := e.(map[string]any)
		p, _ := m["path"].(string)
		p = strings.Trim(p, "/")
		mode, _ := m["mode"].(string)
		typ, _ := m["type"].(string)
		if typ == "tree" || typ == "commit" {
			c.invalid("githubtest supports only blob entries in trees")
			return
		}
		if content, ok := m["content"].(string); ok {
			files[p] = fileEntry{mode: mode, sha: s.putBlob([]byte(content))}
			continue
		}
		sha, hasSHA := m["sha"].(string)
		if _, present := m["sha"]; present && !hasSHA {
			delete(files, p) // sha: null deletes the file
			continue
		}
		if o, ok := s.objects[sha]; !ok || o.kind != "blob" {
			c.invalid("tree.sha " + sha + " is not a valid blob")
			return
		}
		files[p] = fileEntry{mode: mode, sha: sha}
	}
	c.json(http.StatusCreated, c.treeJSON(s.buildTree(files), false))
}

func (c *call) treeJSON(sha string, recursive bool) map[string]any {
	api := c.s.APIURL() + "repos/" + c.repo.FullName() + "/git/"
	var entries []any
	var walk func(sha, prefix string)
	walk = func(sha, prefix string) {
		for _, e := range c.s.objects[sha].entries {
			m := map[string]any{"path": prefix + e.name, "mode": e.mode, "type": e.kind, "sha": e.sha}
			if e.kind == "blob" {
				m["size"] = len(c.s.objects[e.sha].data)
				m["url"] = api + "blobs/" + e.sha
			} else {
				m["url"] = api + "trees/" + e.sha
			}
			entries = append(entries, m)
			if recursive && e.kind == "tree" {
				walk(e.sha, prefix+e.name+"/")
			}
		}
	}
	walk(sha, "")
	sort.SliceStable(entries, func(i, j int) bool {
		return entries[i].(map[string]any)["path"].(string) < entries[j].(map[string]any)["path"].(string)
	})
	if entries == nil {
		entries = []any{}
	}
	return map[string]any{"sha": sha, "url": api + "trees/" + sha, "tree": entries, "truncated": false}
}

func (s *Server) getTree(c *call) {
	sha := c.params["tree_sha"]
	if cm := s.commitObj(sha); cm != nil {
		sha = cm.tree
	} else if resolved, ok := c.repo.resolve(sha); ok {
		sha = s.commitObj(resolved).tree
	}
	if o, ok := s.objects[sha]; !ok || o.kind != "tree" {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	rec := c.query("recursive")
	c.json(http.StatusOK, c.treeJSON(sha, rec != "" && rec != "0" && rec != "false"))
}

// gitCommitJSON is a commit as the Git database API shows it.
func (c *call) gitCommitJSON(sha string) map[string]any {
	return gitCommitJSON(c.s, c.repo, sha)
}

func gitCommitJSON(s *Server, r *Repo, sha string) map[string]any {
	cm := s.commitObj(sha)
	api := s.APIURL() + "repos/" + r.FullName()
	sig := map[string]any{"name": cm.author, "email": cm.email, "date": cm.date}
	var parents []any
	for _, p := range cm.parents {
		parents = append(parents, map[string]any{"sha": p, "url": api + "/git/commits/" + p,
			"html_url": s.WebURL() + r.FullName() + "/commit/" + p})
	}
	if parents == nil {
		parents = []any{}
	}
	return map[string]any{
		"sha": sha, "node_id": "C_" + sha[:16], "url": api + "/git/commits/" + sha,
		"html_url": s.WebURL() + r.FullName() + "/commit/" + sha,
		"author":   sig, "committer": sig, "message": cm.message, "parents": parents,
		"tree":         map[string]any{"sha": cm.tree, "url": api + "/git/trees/" + cm.tree},
		"verification": map[string]any{"verified": false, "reason": "unsigned", "signature": nil, "payload": nil, "verified_at": nil},
	}
}

func (s *Server) createCommit(c *call) {
	tree := c.str("tree")
	if o, ok := s.objects[tree]; !ok || o.kind != "tree" {
		c.invalid("Tree SHA does not exist")
		return
	}
	var parents []string
	ps, _ := c.body["parents"].([]any)
	for _, p := range ps {
		sha, _ := p.(string)
		if s.commitObj(sha) == nil {
			c.invalid("Parent SHA does not exist or is not a commit object")
			return
		}
		parents = append(parents, sha)
	}
	author := s.BotLogin()
	if a, ok := c.body["author"].(map[string]any); ok {
		if n, ok := a["name"].(string); ok {
			author = n
		}
	}
	c.json(http.StatusCreated, c.gitCommitJSON(s.putCommit(tree, parents, c.str("message"), author)))
}

func (s *Server) getGitCommit(c *call) {
	sha := c.params["commit_sha"]
	if s.commitObj(sha) == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.gitCommitJSON(sha))
}

func (c *call) refJSON(name string) map[string]any {
	sha := c.repo.refs[name]
	return map[string]any{
		"ref": "refs/" + name, "node_id": "REF_" + sha[:12],
		"url":    c.s.APIURL() + "repos/" + c.repo.FullName() + "/git/refs/" + name,
		"object": map[string]any{"type": "commit", "sha": sha, "url": c.s.APIURL() + "repos/" + c.repo.FullName() + "/git/commits/" + sha},
	}
}

func (s *Server) getRef(c *call) {
	name := strings.TrimPrefix(c.params["ref"], "refs/")
	if _, ok := c.repo.refs[name]; !ok {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.refJSON(name))
}

func (s *Server) matchingRefs(c *call) {
	prefix := strings.TrimPrefix(c.params["ref"], "refs/")
	var names []string
	for name := range c.repo.refs {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	out := []any{}
	for _, n := range names {
		out = append(out, c.refJSON(n))
	}
	c.json(http.StatusOK, out)
}

func (s *Server) createRef(c *call) {
	ref, sha := c.str("ref"), c.str("sha")
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 {
		c.invalid("Reference name must start with 'refs/' and have at least two slashes.")
		return
	}
	name := strings.TrimPrefix(ref, "refs/")
	if _, ok := c.repo.refs[name]; ok {
		c.invalid("Reference already exists")
		return
	}
	if s.commitObj(sha) == nil {
		c.invalid("Object does not exist")
		return
	}
	c.repo.refs[name] = sha
	c.json(http.StatusCreated, c.refJSON(name))
}

func (s *Server) updateRef(c *call) {
	name := strings.TrimPrefix(c.params["ref"], "refs/")
	old, ok := c.repo.refs[name]
	if !ok {
		c.invalid("Reference does not exist")
		return
	}
	sha := c.str("sha")
	if s.commitObj(sha) == nil {
		c.invalid("Object does not exist")
		return
	}
	if force, _ := c.body["force"].(bool); !force && !s.ancestors(sha)[old] {
		c.invalid("Update is not a fast forward")
		return
	}
	c.repo.refs[name] = sha
	c.json(http.StatusOK, c.refJSON(name))
}

func (s *Server) deleteRef(c *call) {
	name := strings.TrimPrefix(c.params["ref"], "refs/")
	if _, ok := c.repo.refs[name]; !ok {
		c.invalid("Reference does not exist")
		return
	}
	delete(c.repo.refs, name)
	c.w.WriteHeader(http.StatusNoContent)
}
