package terraform

import (
	"regexp"
	"strconv"
	"strings"
)

// summarizeText reads what a plan's check shows from the plan's own text,
// before `show -json` has run: the counts of Terraform's "Plan:" line, the
// resources each action header names, and the changed outputs. On a
// 2,000-resource plan `show -json` alone takes 0.3–0.5 s, so the check does
// not wait for it; the JSON then completes the result (summarize) for the
// store and the comment, and gives the sensitive values to redact there.
// The text needs no JSON to stay safe: Terraform prints a sensitive value
// as "(sensitive value)". Only the part after "will perform the following
// actions" is read: the notes on changes made outside Terraform before it
// use the same "# ADDR has changed" headers.
func summarizeText(text string, hasChanges bool) *PlanResult {
	var t textSummary
	for l := range strings.Lines(text) {
		t.line(strings.TrimSuffix(l, "\n"))
	}
	return t.result(hasChanges)
}

// textSummary reads a plan's text a line at a time, as summarizeText
// says: a plan of any size is summarized without holding its text. Until
// the "will perform the following actions" line, the lines are read as if
// there were none (pre); from it on, afresh (post).
type textSummary struct {
	pre, post textPart
	actions   bool
}

// textPart is what the lines of one part of the text say.
type textPart struct {
	r       PlanResult
	outputs bool
}

func (t *textSummary) line(l string) {
	if !t.actions && strings.HasSuffix(strings.TrimSpace(l), "will perform the following actions:") {
		t.actions = true
		return
	}
	if t.actions {
		t.post.line(l, true)
	} else {
		t.pre.line(l, false)
	}
}

func (t *textSummary) result(hasChanges bool) *PlanResult {
	r := t.pre.r
	if t.actions {
		r = t.post.r
	}
	r.HasChanges = hasChanges
	return &r
}

func (p *textPart) line(l string, actions bool) {
	r := &p.r
	switch {
	case actions && strings.HasPrefix(strings.TrimSpace(l), "# "):
		addr, action := actionHeader(strings.TrimSpace(l)[2:])
		switch action {
		case "":
			return
		case "replace":
			r.Replaced = append(r.Replaced, addr)
		case "destroy":
			r.Destroyed = append(r.Destroyed, addr)
		}
		r.Changed = appendOnce(r.Changed, addr)
	case strings.HasPrefix(l, "Plan: "):
		r.Import, r.Add, r.Change, r.Destroy = planCounts(l)
	case l == "Changes to Outputs:":
		p.outputs = true
	case p.outputs && l == "":
		p.outputs = false
	case p.outputs:
		if o, ok := outputLine(l); ok {
			r.Outputs = append(r.Outputs, o)
		}
	}
}

// actionHeaders are the ends of Terraform's (and OpenTofu's) header of a
// resource change, with the action they mean. A data source read during
// apply, an import or a move alone change nothing (their line says so), so
// they are not listed: the JSON does not count them either.
var actionHeaders = []struct{ suffix, action string }{
	{" will be created", "create"},
	{" will be updated in-place", "update"},
	{" must be replaced", "replace"},
	{" will be replaced, as requested", "replace"},
	{" will be replaced due to changes in replace_triggered_by", "replace"},
	{" is tainted, so must be replaced", "replace"},
	{" will be destroyed", "destroy"},
}

// deposed is how a header names a deposed object: its address is before.
var deposed = regexp.MustCompile(` \(deposed object [^)]*\)$`)

// actionHeader is the address and action of a "# ADDR will be ..." header;
// the action is empty for other comments. An address can hold quoted map
// keys, so the suffix is matched at the end of the line.
func actionHeader(h string) (addr, action string) {
	for _, a := range actionHeaders {
		if strings.HasSuffix(h, a.suffix) {
			addr = deposed.ReplaceAllString(strings.TrimSuffix(h, a.suffix), "")
			return addr, a.action
		}
	}
	return "", ""
}

var planLine = regexp.MustCompile(`(\d+) to (import|add|change|destroy)`)

// planCounts reads "Plan: [I to import, ]A to add, C to change, D to destroy.".
func planCounts(l string) (imp, add, change, destroy int) {
	for _, m := range planLine.FindAllStringSubmatch(l, -1) {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "import":
			imp = n
		case "add":
			add = n
		case "change":
			change = n
		case "destroy":
			destroy = n
		}
	}
	return imp, add, change, destroy
}

// outputLine reads a top-level line of "Changes to Outputs:", indented by
// two spaces: "  + name = ...", "  ~ name = ...", "  - name = ...". A value
// that Terraform masks is "(sensitive value)".
func outputLine(l string) (OutputChange, bool) {
	if len(l) < 5 || l[:2] != "  " || l[3] != ' ' {
		return OutputChange{}, false
	}
	var action string
	switch l[2] {
	case '+':
		action = "add"
	case '~':
		action = "change"
	case '-':
		action = "destroy"
	default:
		return OutputChange{}, false
	}
	name, value, ok := strings.Cut(l[4:], " = ")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \"") {
		return OutputChange{}, false
	}
	return OutputChange{Name: name, Action: action, Sensitive: strings.Contains(value, "(sensitive value)")}, true
}

func appendOnce(list []string, s string) []string {
	if n := len(list); n > 0 && list[n-1] == s {
		return list
	}
	return append(list, s)
}
