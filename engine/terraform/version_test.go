package terraform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	version "github.com/hashicorp/go-version"

	"strata.dev/strata/tooltest"
)

func bin(kind Kind, v, path string) Binary {
	return Binary{Path: path, Kind: kind, Version: version.Must(version.NewVersion(v))}
}

// A layer runs the highest version of its engine that its required_version
// allows; with none, the error names the versions there are and what to do.
func TestPick(t *testing.T) {
	bins := []Binary{
		bin(KindTerraform, "1.5.7", "/opt/tf157"),
		bin(KindTerraform, "1.9.8", "/opt/tf198"),
		bin(KindTerraform, "1.7.0", "/opt/tf170"),
		bin(KindTofu, "1.10.6", "/opt/tofu"),
		bin(KindTofu, "1.8.0", "/opt/tofu18"),
	}
	for _, tc := range []struct {
		name     string
		bins     []Binary
		kind     Kind
		required []string
		want     string // path, or a part of the error
	}{
		{"no constraint: the highest terraform", bins, KindTerraform, nil, "/opt/tf198"},
		{"no constraint: the highest tofu", bins, KindTofu, nil, "/opt/tofu"},
		{"a pessimistic constraint", bins, KindTerraform, []string{"~> 1.5.0"}, "/opt/tf157"},
		{"a range", bins, KindTerraform, []string{">= 1.6, < 1.9"}, "/opt/tf170"},
		{"every file's constraint counts", bins, KindTerraform, []string{">= 1.5", "< 1.8"}, "/opt/tf170"},
		{"tofu versions are not terraform's", bins, KindTerraform, []string{">= 1.10"},
			`required_version ">= 1.10" matches none of the terraform binaries: 1.9.8 (/opt/tf198), 1.7.0 (/opt/tf170), 1.5.7 (/opt/tf157). Add one to terraform.binaries in the server config.`},
		{"tofu with a constraint", bins, KindTofu, []string{"< 1.10"}, "/opt/tofu18"},
		{"two constraints, none matching", bins, KindTofu, []string{">= 1.9", "< 1.9"},
			`required_version ">= 1.9" and "< 1.9" matches none of the tofu binaries`},
		{"no binary of the kind", bins[:3], KindTofu, nil,
			"engine tofu: the server has no tofu binary. Add one to terraform.binaries in the server config (kind: tofu), or set `engine: terraform` on the layer."},
		{"a binary whose version is unknown is no candidate", []Binary{{Path: "/opt/x", Kind: KindTerraform}}, KindTerraform, nil,
			"the server has no terraform binary"},
		{"a constraint that is not one", bins, KindTerraform, []string{"newest please"}, `required_version "newest please" is not a version constraint`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Pick(tc.bins, tc.kind, tc.required)
			if strings.HasPrefix(tc.want, "/") {
				if err != nil || got.Path != tc.want {
					t.Fatalf("Pick = %v, %v; want %s", got, err, tc.want)
				}
				return
			}
			var verr *VersionError
			if !errors.As(err, &verr) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Pick = %v, %v; want a VersionError with %q", got, err, tc.want)
			}
		})
	}
}

// Choose reads the layer's required_version and asks the real binary its
// version: the check that Strata and Terraform agree on both.
func TestChooseReadsRequiredVersion(t *testing.T) {
	tf := terraformBin(t)
	abs, err := filepath.Abs(tf)
	if err != nil {
		t.Fatal(err)
	}
	bins := []Binary{{Path: abs, Kind: KindTerraform}}
	layer := func(required string) string {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte("terraform {\n  required_version = \""+required+"\"\n}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	got, err := Choose(context.Background(), bins, KindTerraform, layer(">= 1.0"))
	if err != nil || got.Path != abs || got.Version == nil {
		t.Fatalf("Choose = %v, %v; want %s with its version", got, err, abs)
	}
	_, err = Choose(context.Background(), bins, KindTerraform, layer(">= 99.0"))
	if want := `required_version ">= 99.0" matches none of the terraform binaries: ` + got.Version.String() + " (" + abs + ")"; err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Choose = %v; want %q", err, want)
	}
}

// A version is asked once per file: a binary replaced in place is asked
// again.
func TestBinaryVersionIsCachedPerFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "terraform")
	calls := filepath.Join(t.TempDir(), "calls")
	write := func(v string, mtime time.Time) {
		script := "#!/bin/sh\necho x >> " + calls + "\necho '{\"terraform_version\":\"" + v + "\",\"platform\":\"linux_amd64\"}'\n"
		if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	ask := func() string {
		t.Helper()
		v, err := binaryVersion(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		return v.String()
	}
	count := func() int {
		b, _ := os.ReadFile(calls)
		return strings.Count(string(b), "x")
	}
	write("1.5.7", time.Unix(1_700_000_000, 0))
	if v := ask(); v != "1.5.7" {
		t.Fatalf("version = %s", v)
	}
	if v := ask(); v != "1.5.7" || count() != 1 {
		t.Fatalf("version = %s after %d calls; want 1.5.7 asked once", v, count())
	}
	write("1.6.0", time.Unix(1_700_000_100, 0))
	if v := ask(); v != "1.6.0" || count() != 2 {
		t.Fatalf("version = %s after %d calls; want 1.6.0 asked again", v, count())
	}
}

// With both engines installed, a layer's engine decides the kind, and each
// binary's own version is checked against required_version.
func TestChooseByEngine(t *testing.T) {
	tf := terraformBin(t)
	tofu, err := FindTofu()
	if err == nil {
		_, err = os.Stat(tofu)
	}
	if err != nil {
		tooltest.Missing(t, "tofu ($"+TofuBinaryEnv+" or PATH)", err)
	}
	bins := []Binary{{Path: tf, Kind: KindTerraform}, {Path: tofu, Kind: KindTofu}}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "versions.tf"), []byte("terraform {\n  required_version = \">= 1.6\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Choose(context.Background(), bins, KindTofu, dir)
	if err != nil || got.Path != tofu || got.Kind != KindTofu {
		t.Fatalf("tofu layer: Choose = %v, %v; want %s", got, err, tofu)
	}
	tfVersion, err := binaryVersion(context.Background(), tf)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Choose(context.Background(), bins, KindTerraform, dir)
	if tfVersion.LessThan(version.Must(version.NewVersion("1.6"))) {
		if want := "matches none of the terraform binaries: " + tfVersion.String() + " (" + tf + ")"; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("terraform layer: Choose = %v; want %q", err, want)
		}
	} else if err != nil {
		t.Fatalf("terraform layer: Choose = %v", err)
	}
}
