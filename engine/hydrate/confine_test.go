package hydrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/kustomize/api/types"
)

// evilInput hydrates deploy/evil of a repository with the kustomization
// text, plus files.
func evilInput(t *testing.T, kustomization string, files map[string]string) Input {
	t.Helper()
	all := map[string]string{
		"deploy/evil/kustomization.yaml": kustomization,
		"deploy/evil/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
	}
	for p, c := range files {
		all[p] = c
	}
	in := devInput(writeRepo(t, all))
	in.Source = "deploy/evil"
	in.Images = nil
	return in
}

// mustRefuse hydrates in, and fails unless hydration was refused with want,
// with an error naming the kustomization file and ref, and nothing of
// the host's /etc/passwd shown.
func mustRefuse(t *testing.T, in Input, want error, ref string) {
	t.Helper()
	res, err := Hydrate(context.Background(), in)
	if err == nil {
		t.Fatalf("hydrated %d resources: %v", res.Resources, res.Files)
	}
	t.Logf("refused: %v", err)
	msg := err.Error()
	if !errors.Is(err, want) {
		t.Errorf("error is not %v", want)
	}
	if !strings.Contains(msg, "deploy/evil/kustomization.yaml") || !strings.Contains(msg, ref) {
		t.Errorf("error does not name the kustomization file and %q", ref)
	}
	if strings.Contains(msg, "root:x:") || strings.Contains(msg, "/bin/") {
		t.Errorf("error shows /etc/passwd")
	}
}

// A PR's kustomization that names the host's /etc/passwd, in every place
// kustomize loads a file from, is refused before the build.
func TestKustomizationNamingEtcPasswdIsRefused(t *testing.T) {
	for name, k := range map[string]string{
		"resource":                "resources:\n- /etc/passwd\n",
		"resource above the root": "resources:\n- ../../../../../../../../../../etc/passwd\n",
		"base above the root":     "resources:\n- ../../../../../../../../../../etc\n",
		"configMapGenerator file": "configMapGenerator:\n- name: x\n  files: [/etc/passwd]\n",
		"keyed generator file":    "configMapGenerator:\n- name: x\n  files: [pw=/etc/passwd]\n",
		"secretGenerator env":     "secretGenerator:\n- name: x\n  envs: [/etc/passwd]\n",
		"patch":                   "resources: [cm.yaml]\npatches:\n- path: /etc/passwd\n",
		"openapi":                 "resources: [cm.yaml]\nopenapi:\n  path: /etc/passwd\n",
		"generator config":        "generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata: {name: x}\n  files: [/etc/passwd]\n",
	} {
		t.Run(name, func(t *testing.T) {
			ref := "/etc/passwd"
			if strings.HasPrefix(name, "resource above") {
				ref = "../../../../../../../../../../etc/passwd"
			} else if strings.HasPrefix(name, "base above") {
				ref = "../../../../../../../../../../etc"
			}
			mustRefuse(t, evilInput(t, k, nil), ErrOutsideRoot, ref)
		})
	}
}

// Symlinks in the PR's tree that lead out of it, to a file or to a
// directory with a kustomization, are refused wherever they are named.
func TestKustomizationSymlinkOutOfTheTreeIsRefused(t *testing.T) {
	outside := writeRepo(t, map[string]string{
		"kustomization.yaml": "resources:\n- secret.yaml\n",
		"secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n",
	})
	for name, c := range map[string]struct{ kustomization, link, target string }{
		"resource file":           {"resources:\n- link.yaml\n", "link.yaml", "/etc/passwd"},
		"configMapGenerator file": {"configMapGenerator:\n- name: x\n  files: [link.yaml]\n", "link.yaml", "/etc/passwd"},
		"base directory":          {"resources:\n- base\n", "base", outside},
		"component":               {"components:\n- base\n", "base", outside},
	} {
		t.Run(name, func(t *testing.T) {
			in := evilInput(t, c.kustomization, nil)
			if err := os.Symlink(c.target, filepath.Join(in.Root, "deploy/evil", c.link)); err != nil {
				t.Fatal(err)
			}
			mustRefuse(t, in, ErrOutsideRoot, c.link)
		})
	}
}

// A symlink that stays in the tree is followed as before.
func TestSymlinkInsideTheTreeIsFollowed(t *testing.T) {
	in := evilInput(t, "resources:\n- base\n", map[string]string{
		"shared/kustomization.yaml": "resources: [cm.yaml]\n",
		"shared/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared}\n",
	})
	if err := os.Symlink("../../shared", filepath.Join(in.Root, "deploy/evil/base")); err != nil {
		t.Fatal(err)
	}
	res, err := Hydrate(context.Background(), in)
	if err != nil || res.Resources != 1 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
}

// Plugins that run code, KRM functions (exec or container) and Helm chart
// inflation are off: the build is refused and nothing runs.
func TestPluginsFunctionsAndHelmChartsAreOff(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	for name, c := range map[string]struct{ kustomization, config string }{
		"exec plugin": {"generators: [gen.yaml]\n", "apiVersion: someteam.example.com/v1\nkind: Evil\nmetadata: {name: x}\n"},
		"exec function": {"generators: [gen.yaml]\n", "apiVersion: v1\nkind: Evil\nmetadata:\n  name: x\n  annotations:\n" +
			"    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n      args: [-c, 'touch " + marker + "']\n"},
		"container function": {"transformers: [gen.yaml]\n", "apiVersion: v1\nkind: Evil\nmetadata:\n  name: x\n  annotations:\n" +
			"    config.kubernetes.io/function: |\n      container:\n        image: busybox\n        network: true\n"},
	} {
		t.Run(name, func(t *testing.T) {
			in := evilInput(t, c.kustomization, map[string]string{"deploy/evil/gen.yaml": c.config})
			res, err := Hydrate(context.Background(), in)
			if err == nil {
				t.Fatalf("built %d resources", res.Resources)
			}
			t.Logf("refused: %v", err)
			if _, err := os.Stat(marker); err == nil {
				t.Error("the function ran")
			}
		})
	}

	t.Run("helmCharts", func(t *testing.T) {
		charts := countingServer(t, "")
		in := evilInput(t, "helmCharts:\n- name: x\n  repo: "+charts.URL+"\n  version: 1.0.0\n", nil)
		mustRefuse(t, in, errHelmCharts, "helmCharts")
		if n := charts.hits.Load(); n != 0 {
			t.Errorf("%d requests reached the chart repository", n)
		}
	})

	o := kustomizeOptions()
	pc := o.PluginConfig
	if o.LoadRestrictions != types.LoadRestrictionsRootOnly || pc.PluginRestrictions != types.PluginRestrictionsBuiltinsOnly ||
		pc.FnpLoadingOptions.EnableExec || pc.FnpLoadingOptions.Network || len(pc.FnpLoadingOptions.Mounts) > 0 || pc.HelmConfig.Enabled {
		t.Errorf("kustomize options = %+v, plugins %+v", o, pc)
	}
}
