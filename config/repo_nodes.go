package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"strata.dev/strata/command"
)

// repoDecoder walks the YAML nodes of a repo config.
type repoDecoder struct {
	repoErrs
	nodes   int // visited, to stop alias bombs
	stopped bool
}

// fieldFunc decodes the value of one key; what names it in errors, e.g.
// `"enabled" in autoplan of layer "network"`.
type fieldFunc func(n *yaml.Node, what string)

// maxNodes bounds the walk: aliases can make a small file expand enormously.
const maxNodes = 100000

func (d *repoDecoder) resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	d.nodes++
	return n
}

// overBudget reports, once, that the walk visited too many nodes.
func (d *repoDecoder) overBudget(n *yaml.Node) bool {
	if d.nodes <= maxNodes {
		return false
	}
	if !d.stopped {
		d.stopped = true
		d.add(n.Line, "too many YAML nodes (aliases?)")
	}
	return true
}

// fields decodes a mapping, reporting unknown and repeated keys.
func (d *repoDecoder) fields(n *yaml.Node, where string, fields map[string]fieldFunc) {
	if n = d.resolve(n); d.overBudget(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.add(n.Line, "%s must be a mapping, not %s", where, describe(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		f, ok := fields[k.Value]
		switch {
		case k.Kind != yaml.ScalarNode:
			d.add(k.Line, "keys in %s must be strings", where)
		case k.Value == "<<":
			d.add(k.Line, "merge keys (<<) are not supported in %s", where)
		case !ok:
			d.add(k.Line, "unknown key %q in %s%s", k.Value, where, didYouMean(k.Value, slices.Sorted(maps.Keys(fields))))
		case seen[k.Value]:
			d.add(k.Line, "key %q repeated in %s", k.Value, where)
		default:
			seen[k.Value] = true
			f(v, fmt.Sprintf("%q in %s", k.Value, where))
		}
	}
}

// where names a list item by the first of its keys that is a string, e.g.
// `layer "network"`, or else by its line.
func (d *repoDecoder) where(n *yaml.Node, kind string, keys ...string) string {
	n = d.resolve(n)
	for _, key := range keys {
		for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key && n.Content[i+1].Kind == yaml.ScalarNode && n.Content[i+1].Value != "" {
				return fmt.Sprintf("%s %q", kind, n.Content[i+1].Value)
			}
		}
	}
	return fmt.Sprintf("%s at line %d", kind, n.Line)
}

func (d *repoDecoder) required(n *yaml.Node, where, key, value string) {
	if value == "" && d.resolve(n).Kind == yaml.MappingNode {
		d.add(n.Line, "%s needs %q", where, key)
	}
}

func (d *repoDecoder) list(item func(*yaml.Node)) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.SequenceNode {
			d.add(n.Line, "%s must be a list, not %s", what, describe(n))
			return
		}
		for _, c := range n.Content {
			if d.overBudget(c) {
				return
			}
			item(c)
		}
	}
}

func (d *repoDecoder) str(p *string) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.ScalarNode || !(n.Tag == "!!str" || n.Tag == "!!int" || n.Tag == "!!float") {
			d.add(n.Line, "%s must be a string, not %s", what, describe(n))
			return
		}
		*p = n.Value
	}
}

// oneOf decodes a string that must be one of allowed, naming them when it
// is not; an empty one leaves *p as it was.
func oneOf[T ~string](d *repoDecoder, p *T, allowed ...T) fieldFunc {
	return func(n *yaml.Node, what string) {
		var s string
		if d.str(&s)(n, what); s == "" {
			return
		}
		if !slices.Contains(allowed, T(s)) {
			names := make([]string, len(allowed))
			for i, a := range allowed {
				names[i] = string(a)
			}
			last := len(names) - 1
			d.add(n.Line, "%s must be %s or %s, not %q", what, strings.Join(names[:last], ", "), names[last], s)
			return
		}
		*p = T(s)
	}
}

func (d *repoDecoder) strs(p *[]string) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.SequenceNode {
			d.add(n.Line, "%s must be a list of strings, not %s", what, describe(n))
			return
		}
		*p = []string{}
		for _, c := range n.Content {
			var s string
			d.str(&s)(c, "an item of "+what)
			*p = append(*p, s)
		}
	}
}

func (d *repoDecoder) boolean(p *bool) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(p) != nil {
			d.add(n.Line, "%s must be true or false, not %s", what, describe(n))
		}
	}
}

func (d *repoDecoder) integer(p *int) fieldFunc {
	return func(n *yaml.Node, what string) {
		n = d.resolve(n)
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(p) != nil {
			d.add(n.Line, "%s must be a number, not %s", what, describe(n))
		}
	}
}

// duration reads "2h", "30m", "1h30m" or "1d"; it must be positive.
func (d *repoDecoder) duration(p *time.Duration) fieldFunc {
	return func(n *yaml.Node, what string) {
		var s string
		if d.str(&s)(n, what); s == "" {
			return
		}
		v, err := command.ParseDuration(s)
		switch {
		case err != nil:
			d.add(n.Line, "%s must be a duration like 2h, 30m or 1d, not %q", what, s)
		case v <= 0:
			d.add(n.Line, "%s must be positive, not %q", what, s)
		default:
			*p = v
		}
	}
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!null":
		return "null"
	case "!!bool", "!!int", "!!float":
		return n.Value
	}
	return strconv.Quote(n.Value)
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// addYAML reports a YAML syntax or structure error on its line.
func (d *repoDecoder) addYAML(err error) {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		d.add(line, "invalid YAML: %s", m[2])
		return
	}
	d.add(0, "invalid YAML: %s", msg)
}
