//go:build ignore

// gen.go writes schemas.json.gz, the Kubernetes schemas hydrated output is
// validated against, from the OpenAPI v3 documents of a Kubernetes release
// (api/openapi-spec/v3 of the k8s.io/kubernetes module). Run it when the
// release changes:
//
//	go mod download k8s.io/kubernetes@v1.37.2
//	go run gen.go $(go env GOMODCACHE)/k8s.io/kubernetes@v1.37.2/api/openapi-spec/v3 v1.37.2
//
// It keeps only what validation reads, as kubeconform's strict schemas do:
// descriptions, defaults and formats go; a field may be null (kustomize
// writes `creationTimestamp: null`); an object that lists its fields refuses
// others unless it preserves unknown fields.
package main

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

func main() {
	dir, version := os.Args[1], os.Args[2]
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	check(err)
	schemas := map[string]any{}
	kinds := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		check(err)
		var doc struct {
			Components struct {
				Schemas map[string]map[string]any `json:"schemas"`
			} `json:"components"`
		}
		check(json.Unmarshal(data, &doc))
		for name, s := range doc.Components.Schemas {
			for _, gvk := range gvks(s) {
				if gvk["kind"] == "" || gvk["version"] == "" {
					continue
				}
				apiVersion := gvk["version"]
				if gvk["group"] != "" {
					apiVersion = gvk["group"] + "/" + gvk["version"]
				}
				kinds[apiVersion+" "+gvk["kind"]] = name
			}
			schemas[name] = strip(s, true)
		}
	}
	// Keep only what a kind reaches.
	keep := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				name := filepath.Base(ref)
				if !keep[name] {
					keep[name] = true
					walk(schemas[name])
				}
			}
			for _, c := range v {
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	for _, name := range kinds {
		if !keep[name] {
			keep[name] = true
			walk(schemas[name])
		}
	}
	for name := range schemas {
		if !keep[name] {
			delete(schemas, name)
		}
	}
	out, err := os.Create("schemas.json.gz")
	check(err)
	zw, err := gzip.NewWriterLevel(out, gzip.BestCompression)
	check(err)
	check(json.NewEncoder(zw).Encode(map[string]any{
		"kubernetes": version,
		"kinds":      kinds,
		"components": map[string]any{"schemas": schemas},
	}))
	check(zw.Close())
	check(out.Close())
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Printf("%d kinds, %d schemas\n", len(kinds), len(schemas))
}

func gvks(s map[string]any) []map[string]string {
	list, _ := s["x-kubernetes-group-version-kind"].([]any)
	var out []map[string]string
	for _, g := range list {
		m, _ := g.(map[string]any)
		e := map[string]string{}
		for k, v := range m {
			e[k], _ = v.(string)
		}
		out = append(out, e)
	}
	return out
}

// strip keeps what validation reads, nullable and strict. The branches of a
// oneOf are not nullable (null would match each of them, which oneOf
// refuses): null is a branch of its own.
func strip(v any, nullable bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range v {
			switch k {
			case "description", "default", "format", "example", "externalDocs":
				continue
			}
			if len(k) > 2 && k[:2] == "x-" {
				continue
			}
			if k == "properties" {
				props := map[string]any{}
				for name, p := range c.(map[string]any) {
					props[name] = strip(p, true)
				}
				out[k] = props
				continue
			}
			out[k] = strip(c, k != "oneOf" && k != "anyOf")
		}
		if one, ok := out["oneOf"].([]any); ok && nullable {
			out["oneOf"] = append(one, map[string]any{"type": "null"})
		}
		if t, ok := v["type"].(string); ok && nullable {
			out["type"] = []any{t, "null"}
		}
		if e, ok := out["enum"].([]any); ok && nullable {
			out["enum"] = append(e, nil)
		}
		preserve, _ := v["x-kubernetes-preserve-unknown-fields"].(bool)
		if _, has := v["properties"]; has && !preserve {
			if _, set := v["additionalProperties"]; !set {
				out["additionalProperties"] = false
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, c := range v {
			out[i] = strip(c, nullable)
		}
		return out
	}
	return v
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
