// Package policy evaluates policy sets, conftest-style Rego, over a plan's
// JSON (as `terraform show -json` prints it). It is engine-like: files and
// bytes in, findings out; it knows nothing of GitHub, of where the files
// come from or of who may override a denial.
//
// A set is the .rego files of a directory (or one file). Its rules are
// conftest's: in package main, every rule named deny, violation or warn,
// or starting with deny_, violation_ or warn_, is a set of messages. A
// message is a string, or an object with "msg" and optionally "address",
// the resource address it is about (resource_changes[].address in the
// plan). Files parse as Rego v1; a file that only parses as v0 (the
// pre-1.0 syntax, `deny[msg] { ... }`) is taken as v0.
package policy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"strata.dev/strata/engine/markdown"
)

// Limits of one evaluation: a policy set is code, and a plan's JSON can be
// large; neither may hold a server's worker or memory for long.
const (
	// DefaultTimeout bounds one set's evaluation over one plan.
	DefaultTimeout = 30 * time.Second
	// MaxPlanJSON is the largest plan JSON evaluated (its Go values take
	// several times its size).
	MaxPlanJSON = 32 << 20
	// MaxFiles and MaxPolicyBytes bound what a set loads.
	MaxFiles       = 500
	MaxPolicyBytes = 4 << 20
	// MaxFindings bounds the denials and warnings kept per set; the count
	// says how many there were.
	MaxFindings = 1000
	// maxMessage bounds one message (a rule can build any string).
	maxMessage = 2000
)

// Namespace is the package whose rules count, as conftest's default.
const Namespace = "main"

// File is one .rego file of a set; Path is how errors name it.
type File struct {
	Path string
	Text []byte
}

// Kind is what a rule's finding does: a denial or a warning.
type Kind string

const (
	Deny Kind = "deny"
	Warn Kind = "warn"
)

// Finding is one message of a deny, violation or warn rule.
type Finding struct {
	Kind Kind   `json:"kind"`
	Rule string `json:"rule"`
	// Address is the resource the message is about, when the rule gave one.
	Address string `json:"address,omitempty"`
	Msg     string `json:"msg"`
}

// Result is what a set found in one plan.
type Result struct {
	Denials  []Finding `json:"denials,omitempty"`
	Warnings []Finding `json:"warnings,omitempty"`
	// Dropped counts findings past MaxFindings.
	Dropped int `json:"dropped,omitempty"`
}

// Problem is one error in a set's Rego, at its place.
type Problem struct {
	File string
	Line int
	Msg  string
}

func (p Problem) String() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Msg)
}

// RegoError is a set that does not parse or compile: every problem with
// its file and line.
type RegoError struct{ Problems []Problem }

func (e *RegoError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Options tune one evaluation; the zero value is the defaults.
type Options struct {
	Timeout time.Duration
}

// Evaluate runs a set's rules over a plan's JSON. A set that does not parse
// or compile returns *RegoError; one that runs past the timeout, or a plan
// over MaxPlanJSON, returns an error saying so.
func Evaluate(ctx context.Context, files []File, planJSON []byte, o Options) (*Result, error) {
	if len(planJSON) > MaxPlanJSON {
		return nil, fmt.Errorf("the plan's JSON is %d bytes, over the %d policies evaluate", len(planJSON), MaxPlanJSON)
	}
	compiler, err := Compile(files)
	if err != nil {
		return nil, err
	}
	var input any
	dec := json.NewDecoder(bytes.NewReader(planJSON))
	dec.UseNumber()
	if err := dec.Decode(&input); err != nil {
		return nil, fmt.Errorf("read the plan's JSON: %w", err)
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res := &Result{}
	for _, rule := range ruleNames(compiler) {
		rs, err := rego.New(rego.Compiler(compiler), rego.Query("data."+Namespace+"."+rule), rego.Input(input),
			rego.StrictBuiltinErrors(true)).Eval(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("the policies ran past their %s limit (rule %s)", timeout, rule)
			}
			return nil, fmt.Errorf("rule %s: %w", rule, err)
		}
		for _, r := range rs {
			for _, e := range r.Expressions {
				res.add(kindOf(rule), rule, e.Value)
			}
		}
	}
	return res, nil
}

// Compile parses and compiles a set, with the builtins a policy over a
// plan needs: none that reaches the network or the server's environment.
func Compile(files []File) (*ast.Compiler, error) {
	if len(files) == 0 {
		return nil, &RegoError{Problems: []Problem{{File: ".", Msg: "no .rego file"}}}
	}
	if len(files) > MaxFiles {
		return nil, &RegoError{Problems: []Problem{{File: files[0].Path, Msg: fmt.Sprintf("%d .rego files, more than %d", len(files), MaxFiles)}}}
	}
	caps := capabilities()
	var problems []Problem
	modules := map[string]*ast.Module{}
	total := 0
	for _, f := range files {
		total += len(f.Text)
		if total > MaxPolicyBytes {
			return nil, &RegoError{Problems: []Problem{{File: f.Path, Msg: fmt.Sprintf("the set's files weigh more than %d bytes", MaxPolicyBytes)}}}
		}
		m, err := parse(f, caps)
		if err != nil {
			problems = append(problems, problemsOf(f.Path, err)...)
			continue
		}
		modules[f.Path] = m
	}
	if len(problems) > 0 {
		return nil, &RegoError{Problems: problems}
	}
	c := ast.NewCompiler().WithCapabilities(caps)
	if c.Compile(modules); c.Failed() {
		return nil, &RegoError{Problems: problemsOf("", c.Errors)}
	}
	return c, nil
}

// parse reads a file as Rego v1, or as v0 when only that parses it; the
// v1 error is the one reported.
func parse(f File, caps *ast.Capabilities) (*ast.Module, error) {
	m, err := ast.ParseModuleWithOpts(f.Path, string(f.Text), ast.ParserOptions{RegoVersion: ast.RegoV1, Capabilities: caps})
	if err == nil {
		return m, nil
	}
	if m0, err0 := ast.ParseModuleWithOpts(f.Path, string(f.Text), ast.ParserOptions{RegoVersion: ast.RegoV0, Capabilities: caps}); err0 == nil {
		return m0, nil
	}
	return nil, err
}

// unsafeBuiltins reach outside the evaluation: the network, the server's
// environment (opa.runtime has its variables) or its clock-free output.
var unsafeBuiltins = map[string]bool{
	"http.send": true, "net.lookup_ip_addr": true, "opa.runtime": true, "trace": true,
	"rego.parse_module": true,
}

func capabilities() *ast.Capabilities {
	caps := ast.CapabilitiesForThisVersion()
	kept := caps.Builtins[:0]
	for _, b := range caps.Builtins {
		if !unsafeBuiltins[b.Name] {
			kept = append(kept, b)
		}
	}
	caps.Builtins = kept
	return caps
}

func problemsOf(file string, err error) []Problem {
	var errs ast.Errors
	if !errors.As(err, &errs) {
		return []Problem{{File: file, Msg: err.Error()}}
	}
	out := make([]Problem, 0, len(errs))
	for _, e := range errs {
		p := Problem{File: file, Msg: e.Message}
		if e.Location != nil {
			p.File, p.Line = e.Location.File, e.Location.Row
		}
		out = append(out, p)
	}
	return out
}

// ruleNames are the rules of the namespace that conftest reads, sorted.
func ruleNames(c *ast.Compiler) []string {
	seen := map[string]bool{}
	for _, m := range c.Modules {
		if m.Package.Path.String() != "data."+Namespace {
			continue
		}
		for _, r := range m.Rules {
			name := r.Head.Name.String()
			if name == "" && len(r.Head.Reference) > 1 {
				name = r.Head.Reference[1].Value.String()
			}
			if kindOf(name) != "" {
				seen[name] = true
			}
		}
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func kindOf(rule string) Kind {
	for _, p := range []struct {
		prefix string
		kind   Kind
	}{{"deny", Deny}, {"violation", Deny}, {"warn", Warn}} {
		if rule == p.prefix || strings.HasPrefix(rule, p.prefix+"_") {
			return p.kind
		}
	}
	return ""
}

// add records what a rule's value holds: a set of messages (strings or
// objects), or true for a boolean rule.
func (r *Result) add(kind Kind, rule string, v any) {
	switch v := v.(type) {
	case bool:
		if v {
			r.keep(Finding{Kind: kind, Rule: rule, Msg: rule})
		}
	case []any:
		for _, m := range v {
			r.keep(finding(kind, rule, m))
		}
	case string, map[string]any:
		r.keep(finding(kind, rule, v))
	}
}

func finding(kind Kind, rule string, m any) Finding {
	f := Finding{Kind: kind, Rule: rule}
	switch m := m.(type) {
	case string:
		f.Msg = m
	case map[string]any:
		f.Msg = text(m["msg"])
		f.Address = text(m["address"])
		if f.Msg == "" {
			b, _ := json.Marshal(m)
			f.Msg = string(b)
		}
	default:
		b, _ := json.Marshal(m)
		f.Msg = string(b)
	}
	f.Msg = cut(f.Msg, maxMessage)
	f.Address = cut(f.Address, maxMessage)
	return f
}

func text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return markdown.Head(s, n) + "…"
}

func (r *Result) keep(f Finding) {
	if len(r.Denials)+len(r.Warnings) >= MaxFindings {
		r.Dropped++
		return
	}
	if f.Kind == Deny {
		r.Denials = append(r.Denials, f)
	} else {
		r.Warnings = append(r.Warnings, f)
	}
}
