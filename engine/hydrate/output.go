package hydrate

import (
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// resourceID is what names a resource's file.
type resourceID struct {
	apiVersion, kind, namespace, name string
}

func (id resourceID) group() string {
	if i := strings.Index(id.apiVersion, "/"); i >= 0 {
		return id.apiVersion[:i]
	}
	return ""
}

func (id resourceID) less(o resourceID) bool {
	a := [...]string{id.kind, id.namespace, id.name, id.apiVersion}
	b := [...]string{o.kind, o.namespace, o.name, o.apiVersion}
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// layout serializes each resource to its own file, named
// {kind}_{namespace}_{name}.yaml in lower case ({kind}_{name}.yaml without a
// namespace). Names are assigned in the order of the resources' identities,
// never of the build's output, so the same resources always get the same
// files. When two resources would share a name, they get the API group in the
// kind part, then a numeric suffix.
func layout(nodes []*yaml.RNode) (map[string][]byte, []string, error) {
	type entry struct {
		id   resourceID
		node *yaml.RNode
	}
	entries := make([]entry, 0, len(nodes))
	kinds := map[string]bool{}
	for _, n := range nodes {
		id := resourceID{
			apiVersion: n.GetApiVersion(),
			kind:       n.GetKind(),
			namespace:  n.GetNamespace(),
			name:       n.GetName(),
		}
		entries = append(entries, entry{id, n})
		kinds[id.kind] = true
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].id.less(entries[j].id) })

	plain := map[string]int{}
	for _, e := range entries {
		plain[fileName(e.id, false)]++
	}
	files := make(map[string][]byte, len(entries)+1)
	for _, e := range entries {
		name := fileName(e.id, false)
		if plain[name] > 1 {
			name = fileName(e.id, true)
		}
		name = unique(files, name)
		out, err := e.node.String()
		if err != nil {
			return nil, nil, fmt.Errorf("serialize %s %s: %w", e.id.kind, e.id.name, err)
		}
		files[name] = []byte(out)
	}
	return files, sortedKeys(kinds), nil
}

func fileName(id resourceID, withGroup bool) string {
	kind := id.kind
	if withGroup && id.group() != "" {
		kind += "." + id.group()
	}
	parts := []string{kind}
	if id.namespace != "" {
		parts = append(parts, id.namespace)
	}
	parts = append(parts, id.name)
	for i, p := range parts {
		parts[i] = sanitize(p)
	}
	return strings.Join(parts, "_") + ".yaml"
}

// sanitize keeps names portable: lower case letters, digits, '.', '-'.
// Anything else (':' in RBAC names, '_', '/') becomes '-'.
func sanitize(s string) string {
	s = strings.ToLower(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '-'
	}, s)
}

// unique returns name, or name with the first free suffix -2, -3, ...
func unique(taken map[string][]byte, name string) string {
	if _, ok := taken[name]; !ok && name != SyncStateFile {
		return name
	}
	base := strings.TrimSuffix(name, ".yaml")
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d.yaml", base, i)
		if _, ok := taken[n]; !ok {
			return n
		}
	}
}
