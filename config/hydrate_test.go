package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestHydrateConfigFromFileAndEnvironment(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte("hydrate:\n  allow_remote: [github.com/acme/*]\n  timeout: 2m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadServer(file, envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Hydrate.AllowRemote, []string{"github.com/acme/*"}) || cfg.Hydrate.Timeout != 2*time.Minute {
		t.Errorf("hydrate = %+v", cfg.Hydrate)
	}
	cfg, err = LoadServer(file, envOf(map[string]string{
		"STRATA_HYDRATE_ALLOW_REMOTE": "github.com/acme/base, gitlab.acme.io/*", "STRATA_HYDRATE_TIMEOUT": "30s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.Hydrate.AllowRemote, []string{"github.com/acme/base", "gitlab.acme.io/*"}) || cfg.Hydrate.Timeout != 30*time.Second {
		t.Errorf("environment did not win: %+v", cfg.Hydrate)
	}

	def, err := LoadServer("", envOf(nil))
	if err != nil || len(def.Hydrate.AllowRemote) != 0 || def.Hydrate.Timeout != 5*time.Minute {
		t.Fatalf("defaults: %+v (%v)", def.Hydrate, err)
	}
}

func TestHydrateConfigRefusesPatternsThatAreNotHostAndPath(t *testing.T) {
	for _, p := range []string{"https://github.com/acme/*", "github.com/acme/[", "/", "github.com/acme?ref=x"} {
		_, err := LoadServerFrom(&Server{Hydrate: Hydrate{AllowRemote: []string{p}}}, envOf(nil))
		if err == nil || !strings.Contains(err.Error(), "hydrate.allow_remote") {
			t.Errorf("%q: err = %v", p, err)
		}
	}
	if _, err := LoadServerFrom(&Server{Hydrate: Hydrate{Timeout: -time.Second}}, envOf(nil)); err == nil {
		t.Error("a negative timeout was accepted")
	}
}
