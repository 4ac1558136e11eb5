package config

import (
	"bytes"
	"encoding"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decodeKnown decodes the first YAML document of data into v (a pointer to
// a struct), refusing keys that v's type does not have, with errors worded
// for the operator, in the document's order: an unknown key as
// `file:3: unknown key "workes" (did you mean "workers"?)`, a value of the
// wrong type in yaml's words (`file: line 4: cannot unmarshal ...`). The
// unknown keys are found by walking the document's nodes against the yaml
// tags of v's type, not by reading the YAML library's messages, whose
// wording is not part of its API. An empty document is no error.
func decodeKnown(file string, data []byte, v any) error {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return fmt.Errorf("%s: %w", file, err)
	}
	w := &keyWalker{file: file}
	w.value(&doc, reflect.TypeOf(v).Elem())
	if len(w.lines) > 0 {
		return &keyErrors{lines: w.lines}
	}
	// The walk found nothing: decode, still refusing unknown keys, so that
	// what it did not reach (past its node budget) or does not check
	// (repeated keys) is refused in yaml's words.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return fmt.Errorf("%s: %w", file, err)
		}
		w.typeErrors(te)
		return &keyErrors{lines: w.lines}
	}
	return nil
}

// keyErrors are a config file's decoding errors, one a line, worded for
// the operator.
type keyErrors struct{ lines []string }

func (e *keyErrors) Error() string { return strings.Join(e.lines, "\n") }

// keyWalker goes over a document's nodes beside the Go type they decode
// into, as yaml.v3's decoder does, collecting the errors of a decode with
// KnownFields in the same order.
type keyWalker struct {
	file  string
	lines []string
	nodes int // visited, so that aliases cannot make the walk enormous
}

func (w *keyWalker) value(n *yaml.Node, t reflect.Type) {
	if w.nodes++; w.nodes > maxNodes {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			w.value(c, t)
		}
		return
	case yaml.AliasNode:
		w.value(n.Alias, t)
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case !hasKeys(t):
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		w.mapping(n, t, yamlFields(t))
		return
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			w.value(c, t.Elem())
		}
		return
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.leaf(n.Content[i], t.Key())
			w.value(n.Content[i+1], t.Elem())
		}
		return
	}
	w.leaf(n, t)
}

// mapping checks the keys of a mapping that decodes into struct type t.
func (w *keyWalker) mapping(n *yaml.Node, t reflect.Type, fields []yamlField) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge" {
			w.value(v, t) // the merged mapping (or list of them) has t's keys
			continue
		}
		if k.Kind != yaml.ScalarNode {
			w.leaf(k, reflect.TypeOf("")) // yaml's error for a key that is no string
			continue
		}
		f, ok := fieldNamed(fields, k.Value)
		if !ok {
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.name
			}
			w.lines = append(w.lines, fmt.Sprintf("%s:%d: unknown key %q%s", w.file, k.Line, k.Value, didYouMean(k.Value, names)))
			continue
		}
		w.value(v, f.typ)
	}
}

// leaf decodes a node whose keys are not checked (a scalar, a list of
// them, a type that decodes itself) on its own, for yaml's type errors.
func (w *keyWalker) leaf(n *yaml.Node, t reflect.Type) {
	var te *yaml.TypeError
	if err := n.Decode(reflect.New(t).Interface()); errors.As(err, &te) {
		w.typeErrors(te)
	} else if err != nil {
		w.lines = append(w.lines, fmt.Sprintf("%s: %s", w.file, err))
	}
}

func (w *keyWalker) typeErrors(te *yaml.TypeError) {
	for _, e := range te.Errors {
		w.lines = append(w.lines, fmt.Sprintf("%s: %s", w.file, e))
	}
}

// hasKeys says whether values of t are mappings whose keys the walk
// checks: structs (not those that decode themselves), and lists and maps
// of them.
func hasKeys(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	p := reflect.PointerTo(t)
	unmarshaler := reflect.TypeFor[yaml.Unmarshaler]()
	text := reflect.TypeFor[encoding.TextUnmarshaler]()
	return !p.Implements(unmarshaler) && !p.Implements(text) && !t.Implements(unmarshaler)
}

// yamlField is a key of a struct type and the type its value decodes into.
type yamlField struct {
	name string
	typ  reflect.Type
}

// yamlFields are the keys of struct type t in the order of its fields
// (the order "did you mean" breaks ties in), with the keys of inline
// structs in their place, as yaml.v3 names them: the tag's name, else the
// field's name in lower case.
func yamlFields(t reflect.Type) []yamlField {
	var out []yamlField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
			out = append(out, yamlFields(f.Type)...)
			continue
		case name == "":
			name = strings.ToLower(f.Name)
		}
		out = append(out, yamlField{name: name, typ: f.Type})
	}
	return out
}

func fieldNamed(fields []yamlField, name string) (yamlField, bool) {
	for _, f := range fields {
		if f.name == name {
			return f, true
		}
	}
	return yamlField{}, false
}
