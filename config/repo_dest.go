package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"text/template"
	"text/template/parse"

	"go.yaml.in/yaml/v3"
)

// CommitMessageData is what a sync's dest.commit_message template sees: the
// source commit a hydration renders, and why it ran. Its field names are the
// template's documented names ({{.Subject}}, {{.ShortSHA}}, ...).
type CommitMessageData struct {
	Sync     string // the sync's name
	Repo     string // the source repository, owner/name
	SHA      string // the source commit, 40 hex digits
	ShortSHA string // its first 7
	// Subject is the source commit's subject: its first paragraph on one
	// line, with control characters as spaces, at most 200 characters.
	Subject string
	Author  string // the source commit's author (git's name)
	// Reason is why Strata hydrated: push (the default branch changed the
	// sync's inputs), release (a takeover ended) or repin (a pinned image's
	// tag moved).
	Reason string
}

// Bounds of a commit_message template: its text, and what it may render
// (GitHub keeps whole messages, but people read a screenful).
const (
	maxCommitTemplate = 4 << 10
	MaxCommitMessage  = 16 << 10
)

// commitFuncs are the template functions a commit_message may call: none of
// them loops or allocates by an amount the template chooses (printf's width
// could), so rendering is bounded by the template's own size.
var commitFuncs = map[string]bool{
	"and": true, "or": true, "not": true, "len": true, "index": true, "slice": true, "print": true,
	"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true,
}

// ParseCommitMessage checks a dest.commit_message template: it parses, uses
// only the fields of CommitMessageData and bounded functions (no range,
// define, block or template, no printf), and renders a non-empty message.
func ParseCommitMessage(text string) (*template.Template, error) {
	if len(text) > maxCommitTemplate {
		return nil, fmt.Errorf("is %d bytes long; at most %d", len(text), maxCommitTemplate)
	}
	t, err := template.New("commit_message").Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	for _, tt := range t.Templates() {
		if tt.Name() != t.Name() {
			return nil, fmt.Errorf("defines the template %q; a commit message is one template", tt.Name())
		}
		if err := boundedNodes(tt.Root); err != nil {
			return nil, err
		}
	}
	out, err := RenderCommitMessage(t, CommitMessageData{Sync: "dev", Repo: "acme/app", SHA: strings.Repeat("0", 40),
		ShortSHA: "0000000", Subject: "Subject", Author: "Author", Reason: "push"})
	if err != nil {
		return nil, fmt.Errorf("%v; the fields are %s", err, commitFields)
	}
	if out == "" {
		return nil, errors.New("renders an empty message")
	}
	return t, nil
}

const commitFields = ".Sync, .Repo, .SHA, .ShortSHA, .Subject, .Author and .Reason"

// RenderCommitMessage runs a template ParseCommitMessage accepted, stopping
// at MaxCommitMessage bytes; the result is trimmed.
func RenderCommitMessage(t *template.Template, data CommitMessageData) (string, error) {
	w := &capped{room: MaxCommitMessage}
	if err := t.Execute(w, data); err != nil {
		return "", errors.New(strings.TrimPrefix(err.Error(), "template: "))
	}
	return strings.TrimSpace(w.buf.String()), nil
}

// capped is a buffer that refuses to grow past room, which stops a template.
type capped struct {
	buf  bytes.Buffer
	room int
}

var errTooLong = fmt.Errorf("renders more than %d bytes", MaxCommitMessage)

func (c *capped) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) > c.room {
		return 0, errTooLong
	}
	return c.buf.Write(p)
}

// boundedNodes refuses what could make rendering loop or allocate without
// bound.
func boundedNodes(n parse.Node) error {
	switch n := n.(type) {
	case nil:
		return nil
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := boundedNodes(c); err != nil {
				return err
			}
		}
	case *parse.RangeNode:
		return errors.New("uses range; a commit message template may not loop")
	case *parse.TemplateNode:
		return fmt.Errorf("calls the template %q; a commit message is one template", n.Name)
	case *parse.IfNode:
		return branchNodes(&n.BranchNode)
	case *parse.WithNode:
		return branchNodes(&n.BranchNode)
	case *parse.ActionNode:
		return boundedNodes(n.Pipe)
	case *parse.PipeNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Cmds {
			if err := boundedNodes(c); err != nil {
				return err
			}
		}
	case *parse.CommandNode:
		for _, a := range n.Args {
			if err := boundedNodes(a); err != nil {
				return err
			}
		}
	case *parse.IdentifierNode:
		if !commitFuncs[n.Ident] {
			return fmt.Errorf("calls %s, which a commit message template may not use", n.Ident)
		}
	}
	return nil
}

func branchNodes(b *parse.BranchNode) error {
	for _, n := range []parse.Node{b.Pipe, b.List, b.ElseList} {
		if l, ok := n.(*parse.ListNode); ok && l == nil {
			continue
		}
		if err := boundedNodes(n); err != nil {
			return err
		}
	}
	return nil
}

// commitMessage reads dest.commit_message and checks it where it is written.
func (d *repoDecoder) commitMessage(p *string, where string) fieldFunc {
	return func(n *yaml.Node, what string) {
		d.str(p)(n, what)
		if *p == "" {
			return
		}
		if _, err := ParseCommitMessage(*p); err != nil {
			d.add(n.Line, "dest commit_message of %s %v", where, err)
		}
	}
}

// promotion checks dest.hydrate_to: a valid branch other than dest.branch,
// and each sync's own, since a staging branch carries one promotion PR.
func (v *repoValidator) promotion(syncs []Sync) {
	staging := map[string]string{}
	for _, s := range syncs {
		b := s.Dest.HydrateTo
		if b == "" {
			continue
		}
		where := fmt.Sprintf("sync %q", s.Name)
		if badBranch(b) {
			v.add(s.Line, "dest hydrate_to %q of %s is not a valid branch name", b, where)
		}
		if b == s.Dest.Branch {
			v.add(s.Line, "dest hydrate_to of %s is its dest branch %q: name a staging branch to promote from by pull request", where, b)
		}
		key := s.Dest.Repo + "\x00" + b
		if other, ok := staging[key]; ok {
			v.add(s.Line, "dest hydrate_to %q of %s is also sync %q's: each sync needs its own staging branch, for its own promotion pull request", b, where, other)
		}
		staging[key] = s.Name
	}
}
