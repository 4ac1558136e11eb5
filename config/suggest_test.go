package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	known := []string{"addr", "workers", "data_dir", "database_url", "github", "apply_permission", "plan_permission"}
	for _, tc := range []struct {
		word, want string
	}{
		{"workes", "workers"},    // a letter missing
		{"wokrers", "workers"},   // two neighbours swapped
		{"Workers", "workers"},   // case
		{"data-dir", "data_dir"}, // a dash for an underscore
		{"apply_permisson", "apply_permission"},
		{"plan_permision", "plan_permission"},
		{"x", ""},       // nothing is that close
		{"listen", ""},  // a different word, not a typo
		{"workers", ""}, // known already: no hint
		{"", ""},
	} {
		if got := Nearest(tc.word, known); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// A typo in the server config names the file, the line and the key meant,
// in nested sections and in inlined ones too.
func TestServerConfigSuggestsTheKeyMeant(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	data := "addr: \":9000\"\nworkes: 8\ngithub:\n  app_idd: 12\nretenton: 24h\n"
	if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadServer(file, envOf(nil))
	want := file + `:2: unknown key "workes" (did you mean "workers"?)` + "\n" +
		file + `:4: unknown key "app_idd" (did you mean "app_id"?)` + "\n" +
		file + `:5: unknown key "retenton" (did you mean "retention"?)`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant:\n%s", err, want)
	}
}

// A server config's errors, in the document's order, as the operator reads
// them: the unknown keys (found on the document's nodes) with the key meant,
// yaml's own words for the rest. The expected messages are those the
// server printed when it read them out of yaml.v3's messages.
func TestServerConfigErrorsInTheDocumentsOrder(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string // F stands for the file
	}{
		{"in a list item", "clusters:\n  - nam: prod\n", []string{`F:2: unknown key "nam" (did you mean "name"?)`}},
		{"two levels down", "terraform:\n  binaries:\n    - pth: /x\n      kind: terraform\n", []string{`F:3: unknown key "pth" (did you mean "path"?)`}},
		{"a wrong type, then a typo", "workers: many\nworkes: 8\n", []string{"F: line 1: cannot unmarshal !!str `many` into int", `F:2: unknown key "workes" (did you mean "workers"?)`}},
		{"interleaved", "github:\n  app_id: x\n  webhok_secret: s\nretention: soon\n", []string{
			"F: line 2: cannot unmarshal !!str `x` into int64",
			`F:3: unknown key "webhok_secret" (did you mean "webhook_secret"?)`,
			"F: line 4: cannot unmarshal !!str `soon` into time.Duration"}},
		{"inline keys and case", "Workers: 2\nencryption_kyes: [a]\n", []string{
			`F:1: unknown key "Workers" (did you mean "workers"?)`, `F:2: unknown key "encryption_kyes" (did you mean "encryption_keys"?)`}},
		{"nothing close", "terraform:\n  sandbox_paths: {read: [/a], writ: [/b]}\n", []string{`F:2: unknown key "read"`, `F:2: unknown key "writ"`}},
		{"sections", "state:\n  adr: x\nhydrate:\n  timeot: 1m\n", []string{
			`F:2: unknown key "adr" (did you mean "addr"?)`, `F:4: unknown key "timeot" (did you mean "timeout"?)`}},
		{"in a merged mapping", "clusters:\n  - <<: {nme: x}\n    name: b\n", []string{`F:2: unknown key "nme" (did you mean "name"?)`}},
		{"merged, all known", "clusters:\n  - &c {name: a, kubeconfig: k}\n  - <<: *c\n    name: b\n", nil},
		{"only the first document", "log: {level: debug, formt: json}\n---\nnope: 1\n", []string{`F:1: unknown key "formt" (did you mean "format"?)`}},
		{"repeated key", "addr: a\naddr: b\n", []string{`F: line 2: mapping key "addr" already defined at line 1`}},
		{"a section that is a number", "github: 5\n", []string{"F: line 1: cannot unmarshal !!int `5` into config.GitHub"}},
		{"a list that is a mapping", "clusters: {a: b}\n", []string{"F: line 1: cannot unmarshal !!map into []config.Cluster"}},
		{"a key that is a list", "? [a]\n: 1\n", []string{"F: line 1: cannot unmarshal !!seq into string"}},
		{"the file a list", "- a\n- b\n", []string{"F: line 1: cannot unmarshal !!seq into config.Server"}},
		{"syntax", "addr: [\n", []string{"F: yaml: line 1: did not find expected node content"}},
		{"an empty section", "github:\n", nil},
		{"empty", "", nil},
		{"comments only", "# nothing\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "strata.yaml")
			if err := os.WriteFile(file, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadServer(file, envOf(nil))
			got := []string{}
			if err != nil {
				got = strings.Split(strings.ReplaceAll(err.Error(), file, "F"), "\n")
			}
			if want := append([]string{}, tc.want...); !slices.Equal(got, want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// Past the walk's node budget (aliases, or a huge file), an unknown key is
// still refused, in yaml's words.
func TestServerConfigUnknownKeyPastTheWalksBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString("clusters:\n")
	for range maxNodes {
		b.WriteString("  - {}\n")
	}
	b.WriteString("  - {nam: x}\n")
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadServer(file, envOf(nil))
	want := fmt.Sprintf("%s: line %d: field nam not found in type config.Cluster", file, maxNodes+2)
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}
