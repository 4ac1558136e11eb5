package policy

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// plan is a plan's JSON as `terraform show -json` prints it, cut to what
// the policies below read.
const plan = `{"format_version":"1.2","terraform_version":"1.5.7","resource_changes":[
 {"address":"terraform_data.web","type":"terraform_data","name":"web","change":{"actions":["create"],"after":{"input":"public"}}},
 {"address":"terraform_data.db","type":"terraform_data","name":"db","change":{"actions":["delete"],"before":{"input":"x"}}}
]}`

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		denials  []Finding
		warnings []Finding
	}{
		{
			name: "v1 deny with an object: address and message",
			files: map[string]string{"p/deny.rego": `package main
deny contains {"msg": sprintf("%s is deleted", [rc.address]), "address": rc.address} if {
	some rc in input.resource_changes
	"delete" in rc.change.actions
}`},
			denials: []Finding{{Kind: Deny, Rule: "deny", Address: "terraform_data.db", Msg: "terraform_data.db is deleted"}},
		},
		{
			name: "v0 syntax, string message, violation_ prefix and warn",
			files: map[string]string{"p/old.rego": `package main
violation_public[msg] {
	rc := input.resource_changes[_]
	rc.change.after.input == "public"
	msg := "public input"
}
warn[msg] {
	count(input.resource_changes) > 1
	msg := "several changes"
}`},
			denials:  []Finding{{Kind: Deny, Rule: "violation_public", Msg: "public input"}},
			warnings: []Finding{{Kind: Warn, Rule: "warn", Msg: "several changes"}},
		},
		{
			name: "other packages and rule names do not count",
			files: map[string]string{"p/a.rego": `package other
deny contains "not main" if { true }`, "p/b.rego": `package main
denied contains "not a conftest rule" if { true }
deny contains "nothing" if { false }`},
		},
		{
			name:    "boolean deny",
			files:   map[string]string{"p/a.rego": "package main\ndeny if { count(input.resource_changes) == 2 }\n"},
			denials: []Finding{{Kind: Deny, Rule: "deny", Msg: "deny"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Evaluate(context.Background(), filesOf(t, tt.files), []byte(plan), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Denials, tt.denials) || !reflect.DeepEqual(res.Warnings, tt.warnings) {
				t.Fatalf("denials %+v warnings %+v, want %+v %+v", res.Denials, res.Warnings, tt.denials, tt.warnings)
			}
		})
	}
}

func TestRegoErrorsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name, text string
		want       Problem
	}{
		{"syntax", "package main\n\ndeny contains msg if {\n  msg := \n}\n", Problem{File: "policy/bad.rego", Line: 5}},
		{"undefined reference", "package main\n\ndeny contains msg if {\n  msg := nothing_here\n}\n", Problem{File: "policy/bad.rego", Line: 4}},
		{"network builtin refused", "package main\n\ndeny contains msg if {\n  r := http.send({\"method\": \"get\", \"url\": \"http://x\"})\n  msg := r.body\n}\n", Problem{File: "policy/bad.rego", Line: 4}},
		{"environment builtin refused", "package main\n\ndeny contains msg if {\n  msg := opa.runtime().env.HOME\n}\n", Problem{File: "policy/bad.rego", Line: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Evaluate(context.Background(), []File{{Path: "policy/bad.rego", Text: []byte(tt.text)}}, []byte(plan), Options{})
			var re *RegoError
			if !errors.As(err, &re) {
				t.Fatalf("error %v, want a RegoError", err)
			}
			p := re.Problems[0]
			if p.File != tt.want.File || p.Line != tt.want.Line || p.Msg == "" {
				t.Fatalf("problem %+v, want %s:%d", p, tt.want.File, tt.want.Line)
			}
		})
	}
}

func TestEvaluationIsBounded(t *testing.T) {
	slow := []File{{Path: "p/slow.rego", Text: []byte("package main\ndeny contains \"never\" if { count([x | some x in numbers.range(1, 100000000)]) < 0 }\n")}}
	start := time.Now()
	_, err := Evaluate(context.Background(), slow, []byte(plan), Options{Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("error %v, want the time limit", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("stopped after %s", took)
	}
	big := make([]byte, MaxPlanJSON+1)
	if _, err := Evaluate(context.Background(), filesOf(t, map[string]string{"p/a.rego": "package main\n"}), big, Options{}); err == nil {
		t.Fatal("a plan JSON over the limit was evaluated")
	}
	res, err := Evaluate(context.Background(), filesOf(t, map[string]string{"p/a.rego": "package main\ndeny contains x if { some x in numbers.range(1, 1100) }\n"}), []byte(plan), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Denials) != MaxFindings || res.Dropped != 100 {
		t.Fatalf("%d denials, %d dropped; want %d and 100", len(res.Denials), res.Dropped, MaxFindings)
	}
}

func TestLoad(t *testing.T) {
	fsys := fstest.MapFS{
		"policy/a.rego":       {Data: []byte("package main\n")},
		"policy/sub/b.rego":   {Data: []byte("package main\n")},
		"policy/a_test.rego":  {Data: []byte("package main\n")},
		"policy/README.md":    {Data: []byte("#")},
		"other/c.rego":        {Data: []byte("package main\n")},
		"empty/notes.txt":     {Data: []byte("")},
		"single/only.rego":    {Data: []byte("package main\n")},
		"policy/sub/big.rego": {Data: make([]byte, MaxPolicyBytes+1)},
	}
	delete(fsys, "policy/sub/big.rego")
	files, err := Load(fsys, "policy/")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	if want := []string{"policy/a.rego", "policy/sub/b.rego"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("loaded %v, want %v", paths, want)
	}
	if files, err := Load(fsys, "single/only.rego"); err != nil || len(files) != 1 {
		t.Fatalf("one file: %v %v", files, err)
	}
	for _, dir := range []string{"empty", "missing"} {
		if _, err := Load(fsys, dir); err == nil {
			t.Fatalf("%s loaded", dir)
		}
	}
	fsys["big/big.rego"] = &fstest.MapFile{Data: make([]byte, MaxPolicyBytes+1)}
	if _, err := Load(fsys, "big"); err == nil || !strings.Contains(err.Error(), "weigh") {
		t.Fatalf("a file over the limit: %v", err)
	}
	// A symlink out of a repository's tree is not followed through os.Root.
	dir := t.TempDir()
	os.Mkdir(dir+"/policy", 0o755)
	os.WriteFile(dir+"/secret.rego", []byte("package main\n"), 0o600)
	os.Symlink(dir+"/secret.rego", dir+"/policy/link.rego")
	root, err := os.OpenRoot(dir + "/policy")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if _, err := Load(root.FS(), "."); err == nil {
		t.Fatal("a symlink leaving the root was read")
	}
}

func filesOf(t *testing.T, m map[string]string) []File {
	t.Helper()
	var out []File
	for p, text := range m {
		out = append(out, File{Path: p, Text: []byte(text)})
	}
	return out
}
