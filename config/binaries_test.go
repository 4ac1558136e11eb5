package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// executable writes a file that can be run, and returns its path.
func executable(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The operator names binaries in the file or in the environment; terraform_bin
// counts as a terraform binary, before the others.
func TestBinariesFromTheFileAndTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	tf, tofu := executable(t, dir, "terraform"), executable(t, dir, "tofu")
	file := filepath.Join(dir, "strata.yaml")
	yaml := "terraform_bin: " + tf + "\nterraform:\n  binaries:\n    - {path: " + tofu + ", kind: tofu}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadServer(file, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []Binary{{Path: tf, Kind: EngineTerraform}, {Path: tofu, Kind: EngineTofu}}
	if got := cfg.Binaries(); !reflect.DeepEqual(got, want) {
		t.Errorf("binaries = %+v, want %+v", got, want)
	}

	cfg, err = LoadServer(file, envOf(map[string]string{BinariesEnv: "terraform=" + tf + ":tofu=" + tofu, "STRATA_TERRAFORM_BIN": ""}))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Binaries(); !reflect.DeepEqual(got, want) {
		t.Errorf("binaries from %s = %+v, want %+v", BinariesEnv, got, want)
	}

	// No binary configured: terraform on the PATH, as before.
	cfg, err = LoadServer("", envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Binaries(); len(got) != 0 {
		t.Errorf("binaries = %+v, want none", got)
	}
}

// A binary that cannot run is refused when the config loads, with the key.
func TestBinariesProblems(t *testing.T) {
	dir := t.TempDir()
	tf := executable(t, dir, "terraform")
	plain := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  string
		want string
	}{
		{"a kind that is no engine", "terraforms=" + tf, `terraform.binaries[0].kind "terraforms": want terraform or tofu`},
		{"a path that does not exist", "tofu=" + filepath.Join(dir, "nope"), `terraform.binaries[0].path: "` + filepath.Join(dir, "nope") + `" is not an executable file`},
		{"a file that is not executable", "terraform=" + tf + ":tofu=" + plain, `terraform.binaries[1].path: "` + plain + `" is not an executable file`},
		{"a directory", "tofu=" + dir, `terraform.binaries[0].path: "` + dir + `" is not an executable file`},
		{"no path", "tofu=", `terraform.binaries[0].path: missing`},
		{"not KIND=PATH", tf, `STRATA_TERRAFORM_BINARIES: "` + tf + `" is not KIND=PATH`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadServer("", envOf(map[string]string{BinariesEnv: tc.env}))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := LoadServer("", envOf(map[string]string{BinariesEnv: "terraform=" + tf})); err != nil {
		t.Fatalf("a good binary is refused: %v", err)
	}
}
