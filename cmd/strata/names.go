package main

import (
	"fmt"
	"strings"

	"strata.dev/strata/config"
)

// pickLayers are the layers named (by name or dir), in the order named;
// an unknown name is a wrong command line that lists the layers there are.
func pickLayers(all []config.Layer, names []string, root string) ([]config.Layer, error) {
	var picked []config.Layer
	for _, n := range names {
		found := false
		for _, l := range all {
			if l.Name == n || l.Dir == n {
				picked, found = append(picked, l), true
			}
		}
		if !found {
			return nil, unknownName("layer", n, layerNames(all), root)
		}
	}
	return picked, nil
}

// layerNames are the names a layer may be called by: its name, and its dir
// when that differs, as "name (dir)" for the list and both for the hint.
func layerNames(all []config.Layer) []named {
	out := make([]named, 0, len(all))
	for _, l := range all {
		n := named{shown: l.Name, callable: []string{l.Name}}
		if l.Dir != l.Name {
			n.shown += " (" + l.Dir + ")"
			n.callable = append(n.callable, l.Dir)
		}
		out = append(out, n)
	}
	return out
}

// named is one thing a user may name: how the list shows it, and the
// words that call it.
type named struct {
	shown    string
	callable []string
}

func plainNames(names []string) []named {
	out := make([]named, len(names))
	for i, n := range names {
		out[i] = named{shown: n, callable: []string{n}}
	}
	return out
}

// unknownName says that the checkout at where has no `what` called name,
// the nearest known name (config.Nearest, as for config keys), and the
// ones it has. It is a usage error: the command line named it.
func unknownName(what, name string, known []named, where string) error {
	var words, shown []string
	for _, k := range known {
		words = append(words, k.callable...)
		shown = append(shown, k.shown)
	}
	msg := fmt.Sprintf("no %s %q in %s", what, name, where)
	if near := config.Nearest(name, words); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	if len(shown) == 0 {
		msg += fmt.Sprintf(": it has no %ss", what)
	} else {
		msg += fmt.Sprintf("; its %ss: %s", what, strings.Join(shown, ", "))
	}
	return &exitError{code: exitUsage, msg: msg}
}
