package config

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// EnvPrefix starts the name of every environment variable Strata reads.
const EnvPrefix = "STRATA_"

// otherEnv are the STRATA_* variables read outside the server config:
// by `strata run`, by the sandbox's re-exec, and by the tests, which run
// `strata serve` in an environment that sets them. A variable read with
// os.Getenv anywhere in the repository belongs here (TestEveryVariableIsKnown
// finds the ones missing); one the server config reads through applyEnv
// is known without it.
var otherEnv = []string{
	"STRATA_TOFU_BIN",     // strata run: OpenTofu for layers with engine: tofu
	"STRATA_SERVER",       // strata state pull|push: the server
	"STRATA_SANDBOX_SPEC", // the sandbox's re-exec of strata (sandbox)
	"STRATA_SANDBOX_CONFINE",
	"STRATA_HYDRATE_BUILD", // the kustomize build's re-exec of strata (engine/hydrate)
	"STRATA_HELM_TEST",     // the Helm test's re-exec of strata (engine/helm)
	"STRATA_REQUIRE_TOOLS", // tests: a missing tool fails (tooltest)
	"STRATA_TEST_POSTGRES_URL",
	"STRATA_K8S_BIN",
	"STRATA_E2E_KUBECONFIG",
	"STRATA_E2E_CONTEXT",
	"STRATA_CHROMIUM_BIN",
	"STRATA_GITHUB_API_DIR",
	"STRATA_SCREENSHOTS",
	"STRATA_BENCH",
	"STRATA_BENCH_ITERATIONS",
	"STRATA_BENCH_SIZES",
	"STRATA_SOAK",          // bench/soak: run the endurance benchmark
	"STRATA_SOAK_DURATION", // bench/soak: its traffic per configuration
	"STRATA_IMAGE",         // scripts/image and the container tests: the image built and run
	"STRATA_DEBIAN_MIRROR", // scripts/install-image-base
}

// KnownEnv is every STRATA_* variable Strata reads, sorted: those the
// server config asks its environment for, and otherEnv.
func KnownEnv() []string {
	seen := map[string]bool{}
	for _, k := range otherEnv {
		seen[k] = true
	}
	var s Server
	// The names are what applyEnv asks for: a variable added there is
	// known, with no second list to keep. Nothing is set, so nothing fails.
	_ = s.applyEnv(func(key string) (string, bool) {
		if strings.HasPrefix(key, EnvPrefix) {
			seen[key] = true
		}
		return "", false
	})
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckEnv refuses STRATA_* variables of environ (os.Environ's form) that
// Strata does not read, naming the nearest known one: a mistyped
// STRATA_DATABSE_URL would otherwise leave the default database in use
// without a word.
func CheckEnv(environ []string) error {
	known := KnownEnv()
	isKnown := map[string]bool{}
	for _, k := range known {
		isKnown[k] = true
	}
	var problems []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, EnvPrefix) || isKnown[name] {
			continue
		}
		msg := fmt.Sprintf("unknown environment variable %s", name)
		if near := Nearest(name, known); near != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", near)
		}
		problems = append(problems, msg)
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return errors.New(strings.Join(problems, "\n") + "\nStrata reads only the STRATA_* variables it knows: unset or rename these")
}
