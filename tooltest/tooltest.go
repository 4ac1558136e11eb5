// Package tooltest decides what a test does when a tool it needs (the
// terraform binary, a PostgreSQL server) is missing: it skips, so that
// `go test ./...` runs on a bare machine, or it fails when
// STRATA_REQUIRE_TOOLS=1 says the tools must be there, as scripts/test and
// CI do.
package tooltest

import (
	"os"
	"testing"
)

// RequireEnv names the variable that makes a missing tool a failure.
const RequireEnv = "STRATA_REQUIRE_TOOLS"

// Missing ends the test because tool is not there: it fails when tools are
// required, and skips otherwise. tool says what was looked for and where
// ("terraform at bin/terraform"); err says what went wrong.
func Missing(t testing.TB, tool string, err error) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s is required (%s=1): %v", tool, RequireEnv, err)
	}
	t.Skipf("no %s: %v", tool, err)
}
