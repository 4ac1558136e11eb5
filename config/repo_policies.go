package config

import (
	"fmt"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"
)

// PolicySet is a set of conftest-style Rego policies that judge the plans
// of the layers that choose it (docs/governance.md). In .strata.yaml its
// Path is in the repository, read at the default branch's head; in the
// server config it is on the server's disk.
type PolicySet struct {
	Name string `yaml:"name"`
	// Path is a .rego file or a directory of them.
	Path string `yaml:"path"`
	// Owners may approve a plan the set denies: GitHub logins, or
	// "@org/team" for the members of a team.
	Owners      []string    `yaml:"owners"`
	Enforcement Enforcement `yaml:"enforcement"`
	Line        int         `yaml:"-"`
}

// Enforcement says what a set's denials do.
type Enforcement string

const (
	// Block: a denied plan is not applied until an owner of the set
	// approves it (/approve-policies). The default.
	Block Enforcement = "block"
	// Warn: denials are shown, nothing is blocked.
	Warn Enforcement = "warn"
)

// ownerRE is a GitHub login, or @org/team (a team's slug).
var ownerRE = regexp.MustCompile(`^(@[A-Za-z0-9][A-Za-z0-9-]{0,38}/[A-Za-z0-9_.-]{1,100}|@?[A-Za-z0-9][A-Za-z0-9-]{0,38})$`)

// policySet decodes one entry of `policies:`.
func (d *repoDecoder) policySet(n *yaml.Node) PolicySet {
	p := PolicySet{Line: n.Line, Enforcement: Block}
	where := d.where(n, "policy set", "name")
	d.fields(n, where, map[string]fieldFunc{
		"name":   d.str(&p.Name),
		"path":   d.str(&p.Path),
		"owners": d.strs(&p.Owners),
		"enforcement": func(n *yaml.Node, what string) {
			d.str((*string)(&p.Enforcement))(n, what)
		},
	})
	d.required(n, where, "name", p.Name)
	d.required(n, where, "path", p.Path)
	p.Path = cleanPath(p.Path)
	for _, msg := range p.problems() {
		d.add(n.Line, "%s: %s", where, msg)
	}
	return p
}

// problems are what is wrong with a set, whichever file defines it.
func (p PolicySet) problems() []string {
	var out []string
	if p.Enforcement != Block && p.Enforcement != Warn {
		out = append(out, fmt.Sprintf("enforcement must be block or warn, not %q", p.Enforcement))
	}
	if p.Enforcement == Block && len(p.Owners) == 0 {
		out = append(out, "a block set needs owners, who may approve what it denies")
	}
	for _, o := range p.Owners {
		if !ownerRE.MatchString(o) {
			out = append(out, fmt.Sprintf("owner %q is neither a GitHub login nor @org/team", o))
		}
	}
	return out
}

// policies checks the sets of a file: names unique and valid, repository
// paths inside the repository. Whether the path exists is known only on
// the default branch, when the sets are evaluated.
func (v *repoValidator) policies(sets []PolicySet, layers []Layer) {
	names := map[string]bool{}
	for _, p := range sets {
		v.name(p.Line, "policy set", p.Name, names)
		if _, err := repoPath(p.Path); err != nil {
			v.add(p.Line, "path %q of policy set %q: %v", p.Path, p.Name, err)
		}
	}
	for _, l := range layers {
		for _, name := range l.Policies {
			if err := checkPolicyName(name); err != "" {
				v.add(l.Line, "policies of layer %q: %s", l.Name, err)
			}
		}
	}
}

func checkPolicyName(name string) string {
	if name == "" || len(name) > 100 || !policyNameRE.MatchString(name) {
		return fmt.Sprintf("%q is not a policy set name (letters, digits, -, _ and .)", name)
	}
	return ""
}

var policyNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// CheckPolicySets checks the server config's policy sets, named by
// policies[i] in its errors.
func CheckPolicySets(sets []PolicySet) []string {
	var out []string
	seen := map[string]bool{}
	for i, p := range sets {
		where := fmt.Sprintf("policies[%d]", i)
		if msg := checkPolicyName(p.Name); msg != "" {
			out = append(out, where+": "+msg)
		}
		if seen[p.Name] {
			out = append(out, fmt.Sprintf("%s: policy set %q is defined twice", where, p.Name))
		}
		seen[p.Name] = true
		if p.Path == "" {
			out = append(out, where+": path is required")
		}
		for _, msg := range p.withDefaults().problems() {
			out = append(out, where+": "+msg)
		}
	}
	return out
}

func (p PolicySet) withDefaults() PolicySet {
	if p.Enforcement == "" {
		p.Enforcement = Block
	}
	return p
}

// ServerPolicySets are the server config's sets with their defaults.
func (s *Server) ServerPolicySets() []PolicySet {
	out := make([]PolicySet, len(s.Policies))
	for i, p := range s.Policies {
		out[i] = p.withDefaults()
	}
	return out
}

// basePolicies are the sets the default branch's layers that l is (by
// name, or by dir and workspace) choose, together; nil (every set) when
// one of them chooses every set, or none is there.
func basePolicies(base []Layer, l *Layer) []string {
	var names []string
	found := false
	for _, b := range base {
		if b.Name == l.Name || (b.Dir == l.Dir && b.Workspace == l.Workspace) {
			if b.Policies == nil {
				return nil
			}
			found = true
			for _, n := range b.Policies {
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
		}
	}
	if !found {
		return nil
	}
	if names == nil {
		names = []string{}
	}
	return names
}

func clonePolicySets(sets []PolicySet) []PolicySet {
	out := append([]PolicySet(nil), sets...)
	for i := range out {
		out[i].Owners = cloneStrings(out[i].Owners)
	}
	return out
}

// PolicySetsOf are the sets, of those given, that judge layer l: those it
// names, or all of them; names no set has are returned apart.
func PolicySetsOf(l Layer, sets []PolicySet) (chosen []PolicySet, unknown []string) {
	if l.Policies == nil {
		return append([]PolicySet(nil), sets...), nil
	}
	for _, name := range l.Policies {
		i := slices.IndexFunc(sets, func(p PolicySet) bool { return p.Name == name })
		if i < 0 {
			unknown = append(unknown, name)
			continue
		}
		chosen = append(chosen, sets[i])
	}
	return chosen, unknown
}

// PoliciesDiffer reports whether a PR's .strata.yaml changes what judges
// plans (the sets, or which sets a layer chooses) compared with the
// default branch's: those edits take effect only after the merge.
func PoliciesDiffer(defaultBranch, prBranch *Repo) bool {
	var baseSets, prSets []PolicySet
	if defaultBranch != nil {
		baseSets = defaultBranch.Policies
	}
	if prBranch != nil {
		prSets = prBranch.Policies
	}
	if !slices.EqualFunc(baseSets, prSets, func(a, b PolicySet) bool {
		return a.Name == b.Name && a.Path == b.Path && a.Enforcement == b.Enforcement && slices.Equal(a.Owners, b.Owners)
	}) {
		return true
	}
	if prBranch == nil || defaultBranch == nil {
		return false
	}
	for _, l := range prBranch.Layers {
		if !slices.Equal(basePolicies(defaultBranch.Layers, &l), l.Policies) {
			return true
		}
	}
	return false
}

// clonePoliciesOf keeps nil (every set) apart from empty (none).
func clonePoliciesOf(names []string) []string {
	if names == nil {
		return nil
	}
	return append([]string{}, names...)
}
