// Package redact removes secrets from text before it reaches GitHub or the
// store: check run output, comments and run logs.
//
// Two kinds of secret are recognised:
//   - literal values registered with Add (installation tokens, the webhook
//     secret, values Terraform marks sensitive), and the base64 of each;
//   - patterns: GitHub token formats, PEM private key blocks and
//     Authorization header credentials are always on; the server config
//     adds its own regular expressions.
//
// Each match becomes "[redacted]".
package redact

import (
	"encoding/base64"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// Mask replaces every secret.
const Mask = "[redacted]"

// MinLength is the shortest literal value Add registers. Shorter values
// ("true", "8080", "prod") occur in ordinary output, and masking every
// occurrence would make plans unreadable while protecting little; Terraform
// masks its sensitive values itself, so literal redaction is the second
// line of defence.
const MinLength = 6

// builtin patterns, always on. The group named keep is kept, so a header
// still says what it was. Each starts with a literal, which lets the regexp
// engine skip to candidates instead of running its automaton on every byte
// (30x faster on a log); that is why the header patterns start after the
// "A" of Authorization.
var builtin = []string{
	`(?P<keep>uthorization:[ \t]*(?i:bearer|token|basic)[ \t]+)[A-Za-z0-9+/=._~-]+`,
	`(?P<keep>UTHORIZATION:[ \t]*(?i:bearer|token|basic)[ \t]+)[A-Za-z0-9+/=._~-]+`,
	`gh[pousr]_[A-Za-z0-9]{36,251}`,
	`github_pat_[A-Za-z0-9_]{22,251}`,
	// A block without its END line is masked to the end of the text, so a
	// key cut short (or still streaming) never shows.
	`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\z)`,
}

// Redactor masks secrets in text. It is safe for concurrent use; values
// added with Add apply to all later calls, Writers included.
type Redactor struct {
	patterns []pattern
	// multiline is set when a server pattern may match a line end (the
	// built-in ones do not, but for a key block that Writer.Sync handles).
	multiline bool

	mu     sync.Mutex // serialises Add
	values atomic.Pointer[literals]

	// parent is the Redactor this one was forked from, whose values it
	// masks too; merged caches the union of both sets.
	parent *Redactor
	merged atomic.Pointer[mergedLiterals]
}

// mergedLiterals is a fork's values with its parent's, as of the two
// snapshots it was made from.
type mergedLiterals struct {
	own, parent, both *literals
}

type pattern struct {
	re   *regexp.Regexp
	keep int // index of the group named keep, or -1
	// atEnd: a match may depend on where the text ends (Writer.clean).
	atEnd bool
}

// New returns a Redactor with the built-in patterns and the given ones (Go
// regular expressions, from the server config).
func New(patterns []string) (*Redactor, error) {
	r := &Redactor{}
	for _, p := range builtin {
		re := regexp.MustCompile(p)
		r.patterns = append(r.patterns, pattern{re: re, keep: re.SubexpIndex("keep"), atEnd: assertsEnd(p)})
	}
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("redact pattern %q: %w", p, err)
		}
		if re.MatchString("") {
			return nil, fmt.Errorf("redact pattern %q matches empty text", p)
		}
		r.patterns = append(r.patterns, pattern{re: re, keep: -1, atEnd: assertsEnd(p)})
		r.multiline = r.multiline || matchesLineEnd(p)
	}
	r.values.Store(newLiterals(map[string]bool{}))
	return r, nil
}

// Fork returns a Redactor with r's patterns that masks r's values, those
// added to r later included, and the values added to the fork alone: a
// run's own secrets. One Writer of the fork masks a log in one pass, where
// a Writer of a second Redactor in front of r's scanned and copied it twice.
func (r *Redactor) Fork() *Redactor {
	f := &Redactor{patterns: r.patterns, multiline: r.multiline, parent: r}
	f.values.Store(newLiterals(map[string]bool{}))
	return f
}

// lits is the values to mask now: a fork's and its parent's.
func (r *Redactor) lits() *literals {
	own := r.values.Load()
	if r.parent == nil {
		return own
	}
	parent := r.parent.lits()
	if len(own.values) == 0 {
		return parent
	}
	if m := r.merged.Load(); m != nil && m.own == own && m.parent == parent {
		return m.both
	}
	m := &mergedLiterals{own: own, parent: parent, both: own.union(parent)}
	r.merged.Store(m)
	return m.both
}

// Add registers literal secret values. Values shorter than MinLength are
// ignored. For each value its standard base64 encoding (without padding,
// which also catches the padded and the raw form) is registered too, since
// tokens often travel base64-encoded in Basic auth headers and git config,
// and so are its escaped forms inside a JSON or Terraform string (a value
// with a quote, a backslash, a newline or non-ASCII is printed escaped).
// Other encodings (URL, hex) are not.
func (r *Redactor) Add(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.values.Load()
	var added []string
	for _, v := range values {
		for _, s := range []string{v, strings.TrimSpace(v)} {
			if len(s) < MinLength {
				continue
			}
			forms := append([]string{s, base64.RawStdEncoding.EncodeToString([]byte(s))}, escapedForms(s)...)
			for _, s := range forms {
				if !old.set[s] {
					added = append(added, s)
				}
			}
		}
	}
	if len(added) == 0 {
		return
	}
	set := make(map[string]bool, len(old.set)+len(added))
	for s := range old.set {
		set[s] = true
	}
	for _, s := range added {
		set[s] = true
	}
	r.values.Store(newLiterals(set))
}

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	s = r.lits().replace(s)
	for _, p := range r.patterns {
		s = p.replace(s)
	}
	return s
}

func (p pattern) replace(s string) string {
	matches := p.re.FindAllStringSubmatchIndex(s, -1)
	if len(matches) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for _, m := range matches {
		b.WriteString(s[last:m[0]])
		if k := 2 * p.keep; p.keep > 0 && m[k] >= 0 {
			b.WriteString(s[m[k]:m[k+1]])
		}
		b.WriteString(Mask)
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}
