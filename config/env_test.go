package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A STRATA_* variable Strata does not read stops the server with the name
// meant; other variables, and the ones it reads, pass.
func TestCheckEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		environ []string
		want    string // "" is no error
	}{
		{"known", []string{"STRATA_DATABASE_URL=postgres://x", "STRATA_LOG_LEVEL=debug", "STRATA_TOFU_BIN=/bin/tofu", "PATH=/bin"}, ""},
		{"not Strata's", []string{"HOME=/root", "strata_addr=:1", "XSTRATA_ADDR=1", "STRATA=1"}, ""},
		{"a letter swapped", []string{"STRATA_DATABSE_URL=postgres://x"},
			"unknown environment variable STRATA_DATABSE_URL (did you mean STRATA_DATABASE_URL?)\n" +
				"Strata reads only the STRATA_* variables it knows: unset or rename these"},
		{"two, sorted, one with no near name", []string{"STRATA_WORKER=8", "STRATA_FROBNICATE=1"},
			"unknown environment variable STRATA_FROBNICATE\n" +
				"unknown environment variable STRATA_WORKER (did you mean STRATA_WORKERS?)\n" +
				"Strata reads only the STRATA_* variables it knows: unset or rename these"},
		{"an empty value counts", []string{"STRATA_LOG_LEVLE="},
			"unknown environment variable STRATA_LOG_LEVLE (did you mean STRATA_LOG_LEVEL?)\n" +
				"Strata reads only the STRATA_* variables it knows: unset or rename these"},
	} {
		err := CheckEnv(tc.environ)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: CheckEnv(%q) =\n%s\nwant:\n%s", tc.name, tc.environ, got, tc.want)
		}
	}
}

// The variables the server config reads are known without a second list.
func TestKnownEnvHasTheServerConfigs(t *testing.T) {
	known := KnownEnv()
	for _, name := range []string{"STRATA_ADDR", "STRATA_DATABASE_URL", "STRATA_GITHUB_MAX_WAIT", "STRATA_ENCRYPTION_KEYS",
		"STRATA_TERRAFORM_BINARIES", "STRATA_HYDRATE_TIMEOUT", "STRATA_LOG_LEVEL", "STRATA_LOG_FORMAT", "STRATA_TERRAFORM_BIN"} {
		if !slices.Contains(known, name) {
			t.Errorf("KnownEnv lacks %s", name)
		}
	}
}

// Every STRATA_* variable the repository reads or names is known, so that
// `strata serve` started where the tests or an operator set it does not
// refuse it. A name in production code is a variable (or an error naming
// one); in tests, a variable read or named as a constant. When this fails,
// read the variable through the server config's applyEnv, or add it to
// otherEnv in config/env.go.
func TestEveryVariableIsKnown(t *testing.T) {
	name := `(STRATA_[A-Z0-9_]*[A-Z0-9])`
	inCode := regexp.MustCompile(`"` + name + `"`)
	inTests := regexp.MustCompile(`(?:Getenv|LookupEnv)\("` + name + `"\)|Env\w*\s*=\s*"` + name + `"`)
	inScripts := regexp.MustCompile(name + `=`)
	known := KnownEnv()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." && d.Name() != ".ci" || d.Name() == "bin" || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		var re *regexp.Regexp
		switch {
		case strings.HasSuffix(path, "_test.go"):
			re = inTests
		case strings.HasSuffix(path, ".go"):
			re = inCode
		case strings.HasPrefix(rel, "scripts"+string(filepath.Separator)) || strings.HasPrefix(rel, ".ci"+string(filepath.Separator)):
			re = inScripts
		default:
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(data), -1) {
			for _, v := range m[1:] {
				if v == "" {
					continue
				}
				found++
				if !slices.Contains(known, v) {
					t.Errorf("%s names %s, which config.KnownEnv does not know: `strata serve` would refuse it", rel, v)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 50 {
		t.Errorf("found %d names of variables in the repository: the scan missed them", found)
	}
}
