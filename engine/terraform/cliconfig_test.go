package terraform

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The mirrors a CLI config names are read as Terraform reads them, native
// syntax or JSON; relative paths and other blocks are left out.
func TestCLIConfigPaths(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"native", `
plugin_cache_dir = "/ignored"
provider_installation {
  filesystem_mirror {
    path    = "/srv/mirror"
    include = ["strata.test/*/*"]
  }
  filesystem_mirror {
    path = "relative/mirror"
  }
  network_mirror {
    url = "https://mirror.example/"
  }
  dev_overrides {
    "strata.test/strata/world" = "/home/dev/world"
  }
  direct {
    exclude = ["strata.test/*/*"]
  }
}
`, []string{"/srv/mirror", "/home/dev/world"}},
		{"json", `{"provider_installation": {"filesystem_mirror": {"path": "/srv/json-mirror"}, "direct": {}}}`, []string{"/srv/json-mirror"}},
		{"none", `credentials "app.terraform.io" { token = "x" }`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "terraform.rc")
			if err := os.WriteFile(f, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := CLIConfigPaths(f)
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("paths = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	f := filepath.Join(t.TempDir(), "broken.rc")
	if err := os.WriteFile(f, []byte("provider_installation {\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := CLIConfigPaths(f); err == nil {
		t.Error("a CLI config that does not parse was read")
	}
}
