package terraform

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// moduleSources are the `source` arguments of the module calls in dir's
// Terraform files: what layer discovery (Discover) and module following
// (LocalModules) read of every directory of a tree, at every commit.
//
// They depend on the files' contents alone, so they are memoized by
// content, not by path (calls): a directory unchanged since the last
// commit is not parsed again, though its tree is a new one. And files that
// do not spell `module` call none (mayCallModules), so they are not parsed
// at all: parsing each 2,000-resource directory of a tree cost a /plan
// 25–45 ms before its plan started, once per directory (issue 22, item 4).
func moduleSources(dir string) []string {
	files, ok := terraformFiles(dir)
	if !ok {
		return sourcesOf(dir)
	}
	if !mayCallModules(files) {
		return nil
	}
	key := filesKey("", files)
	if got, ok := calls.get(key); ok {
		return got.([]string)
	}
	sources := sourcesOf(dir)
	calls.put(key, sources)
	return sources
}

// sourcesOf parses dir; a directory that does not parse calls nothing.
func sourcesOf(dir string) []string {
	mod, _ := loadModuleOnce(dir)
	if mod == nil {
		return nil
	}
	var sources []string
	for _, call := range mod.ModuleCalls {
		sources = append(sources, call.Source)
	}
	return sources
}

// calls holds the module sources of recently read directory contents:
// enough for every directory of a large monorepo, each a short list.
var calls = &memo{max: 4096, entries: map[string]any{}}

type terraformFile struct {
	name string
	src  []byte
}

// terraformFiles are the files the inspector reads in dir, in its order.
func terraformFiles(dir string) ([]terraformFile, bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false
	}
	var files []terraformFile
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !(strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, false
		}
		files = append(files, terraformFile{name, b})
	}
	return files, true
}

// mayCallModules is false only when no file can hold a module block: in
// Terraform's native syntax a block's type is an identifier, written out;
// in JSON a key may also be spelled with escapes ("\u006dodule").
func mayCallModules(files []terraformFile) bool {
	for _, f := range files {
		if bytes.Contains(f.src, []byte("module")) {
			return true
		}
		if strings.HasSuffix(f.name, ".json") && bytes.Contains(f.src, []byte(`\u`)) {
			return true
		}
	}
	return false
}
