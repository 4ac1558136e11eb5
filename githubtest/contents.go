package githubtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// Contents, commits, compare and tarballs: reading the tree at a commit.

const codeloadPrefix = "/_codeload/"

func (s *Server) getContents(c *call) {
	ref := c.query("ref")
	if ref == "" {
		ref = c.repo.defaultBranch
	}
	sha, ok := c.repo.resolve(ref)
	if !ok {
		c.fail(http.StatusNotFound, "No commit found for the ref "+ref)
		return
	}
	p := strings.Trim(c.params["path"], "/")
	files := s.commitFiles(sha)
	api := s.APIURL() + "repos/" + c.repo.FullName() + "/contents/"
	entry := func(p, typ, objSHA string, size int) map[string]any {
		html := s.WebURL() + c.repo.FullName() + "/blob/" + ref + "/" + p
		m := map[string]any{
			"type": typ, "name": p[strings.LastIndex(p, "/")+1:], "path": p, "sha": objSHA, "size": size,
			"url": api + p + "?ref=" + url.QueryEscape(ref), "html_url": html, "git_url": nil, "download_url": nil,
			"_links": map[string]any{"self": api + p, "git": nil, "html": html},
		}
		if typ == "file" {
			m["download_url"] = s.URL() + "/raw/" + c.repo.FullName() + "/" + sha + "/" + p
		}
		return m
	}
	if f, ok := files[p]; ok {
		data := s.objects[f.sha].data
		m := entry(p, "file", f.sha, len(data))
		m["encoding"] = "base64"
		m["content"] = base64.StdEncoding.EncodeToString(data)
		c.json(http.StatusOK, m)
		return
	}
	// A directory: its direct children.
	prefix := p + "/"
	if p == "" {
		prefix = ""
	}
	children := map[string]map[string]any{}
	for fp, f := range files {
		if !strings.HasPrefix(fp, prefix) {
			continue
		}
		rest := strings.TrimPrefix(fp, prefix)
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			dir := prefix + rest[:i]
			if children[dir] == nil {
				children[dir] = entry(dir, "dir", "", 0)
			}
			continue
		}
		children[fp] = entry(fp, "file", f.sha, len(s.objects[f.sha].data))
	}
	if len(children) == 0 {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	var names []string
	for n := range children {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []any{}
	for _, n := range names {
		out = append(out, children[n])
	}
	c.json(http.StatusOK, out)
}

// diffFiles lists the files that differ between two commits, as the compare
// and pull request files APIs do.
func (c *call) diffFiles(from, to string) []any {
	a, b := c.s.commitFiles(from), c.s.commitFiles(to)
	if a == nil {
		a = map[string]fileEntry{}
	}
	paths := map[string]bool{}
	for p := range a {
		paths[p] = true
	}
	for p := range b {
		paths[p] = true
	}
	var sorted []string
	for p := range paths {
		if a[p].sha != b[p].sha {
			sorted = append(sorted, p)
		}
	}
	sort.Strings(sorted)
	out := []any{}
	for _, p := range sorted {
		oldLines, newLines := lines(c.s.objects[a[p].sha].data), lines(c.s.objects[b[p].sha].data)
		status, sha := "modified", b[p].sha
		switch {
		case a[p].sha == "":
			status, oldLines = "added", 0
		case b[p].sha == "":
			status, sha, newLines = "removed", a[p].sha, 0
		}
		web := c.s.WebURL() + c.repo.FullName()
		out = append(out, map[string]any{
			"sha": sha, "filename": p, "status": status, "additions": newLines, "deletions": oldLines,
			"changes": newLines + oldLines, "blob_url": web + "/blob/" + to + "/" + p, "raw_url": web + "/raw/" + to + "/" + p,
			"contents_url": c.s.APIURL() + "repos/" + c.repo.FullName() + "/contents/" + p + "?ref=" + to,
			"patch":        fmt.Sprintf("@@ -1,%d +1,%d @@", oldLines, newLines),
		})
	}
	return out
}

func lines(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return bytes.Count(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) + 1
}

// commitJSON is a commit as the repository commits API shows it.
func (c *call) commitJSON(sha string) map[string]any {
	cm := c.s.commitObj(sha)
	git := c.gitCommitJSON(sha)
	api := c.s.APIURL() + "repos/" + c.repo.FullName()
	var parent string
	if len(cm.parents) > 0 {
		parent = cm.parents[0]
	}
	files := c.diffFiles(parent, sha)
	adds, dels := 0, 0
	for _, f := range files {
		adds += f.(map[string]any)["additions"].(int)
		dels += f.(map[string]any)["deletions"].(int)
	}
	delete(git, "html_url")
	delete(git, "parents")
	git["comment_count"] = 0
	return map[string]any{
		"sha": sha, "node_id": git["node_id"], "commit": git, "url": api + "/commits/" + sha,
		"html_url": c.s.WebURL() + c.repo.FullName() + "/commit/" + sha, "comments_url": api + "/commits/" + sha + "/comments",
		"author": c.s.userJSON(cm.author), "committer": c.s.userJSON(cm.author),
		"parents": gitCommitJSON(c.s, c.repo, sha)["parents"], "files": files,
		"stats": map[string]int{"additions": adds, "deletions": dels, "total": adds + dels},
	}
}

func (s *Server) getCommit(c *call) {
	sha, ok := c.repo.resolve(c.params["ref"])
	if !ok {
		c.fail(http.StatusUnprocessableEntity, "No commit found for SHA: "+c.params["ref"])
		return
	}
	c.json(http.StatusOK, c.commitJSON(sha))
}

func (s *Server) compare(c *call) {
	base, head, ok := strings.Cut(c.params["basehead"], "...")
	if !ok {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	baseSHA, ok1 := c.repo.resolve(base)
	headRepo := c.repo
	if owner, branch, cross := strings.Cut(head, ":"); cross {
		headRepo = s.repos[strings.ToLower(owner+"/"+c.repo.Name)]
		head = branch
	}
	var headSHA string
	ok2 := headRepo != nil
	if ok2 {
		headSHA, ok2 = headRepo.resolve(head)
	}
	if !ok1 || !ok2 {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	mb := s.mergeBase(baseSHA, headSHA)
	if mb == "" {
		c.fail(http.StatusNotFound, "No common ancestor between "+base+" and "+head+".")
		return
	}
	inBase, inHead := s.ancestors(baseSHA), s.ancestors(headSHA)
	var commits []any
	ahead, behind := 0, 0
	for sha := range inHead {
		if !inBase[sha] {
			ahead++
			commits = append(commits, c.commitJSON(sha))
		}
	}
	for sha := range inBase {
		if !inHead[sha] {
			behind++
		}
	}
	sort.Slice(commits, func(i, j int) bool {
		return s.ancestors(commits[j].(map[string]any)["sha"].(string))[commits[i].(map[string]any)["sha"].(string)]
	})
	status := "diverged"
	switch {
	case ahead == 0 && behind == 0:
		status = "identical"
	case behind == 0:
		status = "ahead"
	case ahead == 0:
		status = "behind"
	}
	if commits == nil {
		commits = []any{}
	}
	web := s.WebURL() + c.repo.FullName()
	c.json(http.StatusOK, map[string]any{
		"url":      s.APIURL() + "repos/" + c.repo.FullName() + "/compare/" + c.params["basehead"],
		"html_url": web + "/compare/" + c.params["basehead"], "permalink_url": web + "/compare/" + c.params["basehead"],
		"diff_url": web + "/compare/" + c.params["basehead"] + ".diff", "patch_url": web + "/compare/" + c.params["basehead"] + ".patch",
		"base_commit": c.commitJSON(baseSHA), "merge_base_commit": c.commitJSON(mb),
		"status": status, "ahead_by": ahead, "behind_by": behind, "total_commits": ahead,
		"commits": commits, "files": c.diffFiles(mb, headSHA),
	})
}

func (s *Server) tarballLink(c *call) {
	sha, ok := c.repo.resolve(c.params["ref"])
	if !ok {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	loc := s.URL() + codeloadPrefix + c.repo.FullName() + "/legacy.tar.gz/" + sha
	c.w.Header().Set("Location", loc)
	c.w.WriteHeader(http.StatusFound)
}

// serveTarball serves /_codeload/OWNER/REPO/legacy.tar.gz/SHA like
// codeload.github.com: a gzipped tar whose one top-level folder is
// OWNER-REPO-SHORTSHA/, after a pax global header holding the SHA.
func (s *Server) serveTarball(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, codeloadPrefix), "/")
	if len(parts) != 4 || parts[2] != "legacy.tar.gz" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	repo := s.repos[strings.ToLower(parts[0]+"/"+parts[1])]
	sha := parts[3]
	var files map[string]fileEntry
	if repo != nil {
		files = s.commitFiles(sha)
	}
	if files == nil {
		s.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	s.tarballs[repo.FullName()+"@"+sha]++
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": sha}})
	top := fmt.Sprintf("%s-%s-%s/", repo.Owner, repo.Name, sha[:7])
	mtime := s.commitObj(sha).date
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top, Mode: 0o775, ModTime: mtime})
	var paths []string
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	dirs := map[string]bool{}
	for _, p := range paths {
		for i := strings.IndexByte(p, '/'); i >= 0; i = nextSlash(p, i) {
			if d := p[:i+1]; !dirs[d] {
				dirs[d] = true
				_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: top + d, Mode: 0o775, ModTime: mtime})
			}
		}
		data := s.objects[files[p].sha].data
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: top + p, Mode: 0o664, Size: int64(len(data)), ModTime: mtime})
		_, _ = tw.Write(data)
	}
	s.mu.Unlock()
	_ = tw.Close()
	_ = gz.Close()
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%s-%s-%s.tar.gz", repo.Owner, repo.Name, sha[:7]))
	_, _ = w.Write(buf.Bytes())
}

func nextSlash(p string, i int) int {
	j := strings.IndexByte(p[i+1:], '/')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// TarballDownloads counts the tarball downloads of a commit.
func (s *Server) TarballDownloads(owner, repo, sha string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[strings.ToLower(owner+"/"+repo)]
	if r == nil {
		return 0
	}
	return s.tarballs[r.FullName()+"@"+sha]
}
