package e2e

import (
	"os"
	"testing"

	"strata.dev/strata/kubetest"
)

// TestMain stops the Kubernetes test cluster that the Helm release
// scenarios start on first use (kubetest).
func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
