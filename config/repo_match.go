package config

import (
	"path"
	"strings"
)

// Matches reports whether a change to changedFile (repo-relative) touches the
// layer: whether it matches one of the layer's when_modified globs, which are
// relative to the layer's dir ("../modules/**/*.tf" watches a sibling modules
// dir). It ignores Autoplan.Enabled, because "/plan" without layers also asks
// which layers a PR touches; autoplan callers check Enabled themselves.
func (l *Layer) Matches(changedFile string) bool {
	name := strings.Split(path.Clean(changedFile), "/")
	for _, g := range l.Autoplan.WhenModified {
		if matchGlob(strings.Split(path.Join(l.Dir, g), "/"), name) {
			return true
		}
	}
	return false
}

// validGlob reports whether every segment of g is a valid path.Match pattern.
// A segment "**" matches any number of directories, including none; inside a
// segment, "**" means the same as "*".
func validGlob(g string) bool {
	for _, seg := range strings.Split(g, "/") {
		if _, err := path.Match(seg, ""); err != nil {
			return false
		}
	}
	return true
}

// matchGlob matches the segments of a pattern against those of a path. It
// works from the end in O(len(pat) * len(name)), so no pattern can make it slow.
func matchGlob(pat, name []string) bool {
	// next[j] says whether pat[i+1:] matches name[j:]; cur is the same for pat[i:].
	next := make([]bool, len(name)+1)
	next[len(name)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		cur := make([]bool, len(name)+1)
		for j := len(name); j >= 0; j-- {
			switch {
			case pat[i] == "**":
				cur[j] = next[j] || (j < len(name) && cur[j+1])
			case j < len(name):
				ok, _ := path.Match(pat[i], name[j])
				cur[j] = ok && next[j+1]
			}
		}
		next = cur
	}
	return next[0]
}
