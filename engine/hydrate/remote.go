package hydrate

import (
	"net/url"
	"path"
	"regexp"
	"strings"
)

// A remote reference is an entry of a kustomization that kustomize would
// fetch over the network instead of reading from the tree: an http(s) URL,
// fetched as a file, or a git URL (github.com/org/repo//path?ref=x,
// git::https://..., ssh://..., git@host:org/repo), cloned with git.

// scpLike is git's user@host:path (and kustomize's user@host/path).
var scpLike = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]*@([^/:]+)[:/](.*)$`)

// isRemote reports whether kustomize could fetch ref instead of reading a
// file of the tree. It errs towards remote: a local file whose name looks
// like a URL is refused rather than a URL taken for a file.
func isRemote(ref string) bool {
	s := strings.TrimSpace(ref)
	lower := strings.ToLower(s)
	if strings.Contains(s, "://") || strings.HasPrefix(lower, "git::") ||
		strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:") || scpLike.MatchString(s) {
		return true
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// remoteLocation is ref as host/path (github.com/acme/base/deploy): no
// scheme, user, query (?ref=) or kustomize's // marker, the host in lower
// case. ok is false for what no allow pattern may cover: file:// (the
// server's own disk), other schemes, and paths with dot segments or escapes
// that could step out of the allowed path on the server's side.
func remoteLocation(ref string) (loc string, ok bool) {
	s := strings.TrimSpace(ref)
	if len(s) >= 5 && strings.EqualFold(s[:5], "git::") {
		s = s[5:]
	}
	s, _, _ = strings.Cut(s, "?")
	s, _, _ = strings.Cut(s, "#")
	var host, p string
	if scheme, _, found := strings.Cut(s, "://"); found {
		switch strings.ToLower(scheme) {
		case "http", "https", "ssh":
		default:
			return "", false
		}
		u, err := url.Parse(s)
		if err != nil || u.Host == "" || u.Opaque != "" {
			return "", false
		}
		host, p = u.Host, u.Path
	} else if m := scpLike.FindStringSubmatch(s); m != nil {
		host, p = m[1], m[2]
	} else if lower := strings.ToLower(s); strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "github.com:") {
		host, p = "github.com", s[len("github.com/"):]
	} else {
		return "", false
	}
	segs := []string{strings.ToLower(host)}
	for _, seg := range strings.Split(p, "/") {
		switch {
		case seg == "":
			continue
		case seg == "." || seg == "..", strings.ContainsAny(seg, `%\`):
			return "", false
		}
		segs = append(segs, seg)
	}
	return strings.Join(segs, "/"), true
}

// allowList is the server's hydrate.allow_remote: host/path patterns
// (github.com/acme/*), each segment matched with path.Match.
type allowList []string

// covers reports whether a pattern matches the leading segments of ref's
// location: github.com/acme/* covers github.com/acme/base//deploy?ref=v1.
func (a allowList) covers(ref string) bool {
	loc, ok := remoteLocation(ref)
	if !ok {
		return false
	}
	for _, p := range a {
		if matchSegments(p, loc, false) {
			return true
		}
	}
	return false
}

// coversRepo reports whether a pattern may cover something in the git
// repository at origin (a clone's URL): github.com/acme/base/deploy allows
// cloning github.com/acme/base, since git fetches the whole repository.
func (a allowList) coversRepo(origin string) bool {
	loc, ok := remoteLocation(origin)
	if !ok {
		return false
	}
	for _, p := range a {
		if matchSegments(p, loc, true) {
			return true
		}
	}
	return false
}

// matchSegments matches pattern against the first segments of loc. When
// prefix is set, loc may also be shorter than pattern.
func matchSegments(pattern, loc string, prefix bool) bool {
	ps := strings.Split(strings.Trim(pattern, "/"), "/")
	ls := strings.Split(loc, "/")
	ps[0] = strings.ToLower(ps[0])
	if len(ls) < len(ps) {
		if !prefix {
			return false
		}
		ps = ps[:len(ls)]
	}
	for i, p := range ps {
		if ok, err := path.Match(p, ls[i]); err != nil || !ok {
			return false
		}
	}
	return true
}
