package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/config"
)

func TestRunSaysTheStateIsLocal(t *testing.T) {
	root := t.TempDir()
	for dir, body := range map[string]string{
		"plain": "resource \"terraform_data\" \"a\" {}\n",
		"own":   "terraform {\n  backend \"s3\" {}\n}\n",
	} {
		os.MkdirAll(filepath.Join(root, dir), 0o755)
		if err := os.WriteFile(filepath.Join(root, dir, "main.tf"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	sayLocalState(&out, root, config.Layer{Name: "plain", Dir: "plain"})
	if !strings.Contains(out.String(), "state: local (terraform.tfstate in plain)") {
		t.Errorf("a layer without a backend: %q", out.String())
	}
	out.Reset()
	sayLocalState(&out, root, config.Layer{Name: "own", Dir: "own"})
	if out.Len() != 0 {
		t.Errorf("a layer with its own backend: %q", out.String())
	}
}
