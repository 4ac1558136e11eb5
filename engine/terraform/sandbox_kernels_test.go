package terraform

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/tooltest"
)

// A layer with a real provider, installed from a packed filesystem mirror
// through the plugin cache, plans in the sandbox of each older kernel
// (the Landlock ABI capped here: 5.13's 1, 5.19's 2, 6.2's 3) for a server
// as root (Terraform then runs as nobody) and as non-root: below ABI 2
// Landlock refuses every move of a file between directories, and init
// still installs the provider.
func TestPlanWorksInTheSandboxOfEachKernel(t *testing.T) {
	if err := sandbox.Detect(sandbox.Settings{}).Err(); err != nil {
		tooltest.Missing(t, "Landlock", err)
	}
	provider := providertest.InstallPacked(t)
	world := providertest.NewWorld(t)
	layer := providertest.Layer(world.Dir, providertest.Thing{Name: "a", Value: "1"})
	for _, abi := range []int{1, 2, 3} {
		for _, notRoot := range []bool{false, true} {
			t.Run("ABI "+strconv.Itoa(abi)+map[bool]string{false: " root", true: " non-root"}[notRoot], func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(layer), 0o644); err != nil {
					t.Fatal(err)
				}
				r, err := Plan(testContext(t), PlanInput{Setup: Setup{WorkDir: dir, TerraformBin: terraformBin(t), PluginCacheDir: t.TempDir(),
					CLIConfigFile: provider.CLIConfig, Sandbox: &Sandbox{ReadWrite: []string{world.Dir},
						Settings: sandbox.Settings{Mode: sandbox.BestEffort, Test: sandbox.Cap{MaxABI: abi, NotRoot: notRoot}}}}})
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(r.Text, "world_thing.a will be created") {
					t.Errorf("plan:\n%s", r.Text)
				}
			})
		}
	}
}
