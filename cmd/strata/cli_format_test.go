package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/tooltest"
)

// formatCheckout is a checkout of two layers: `good` with one resource to
// create, `quiet` with none. It returns the checkout and Terraform's
// version.
func formatCheckout(t *testing.T) (root, version string) {
	t.Helper()
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	t.Setenv(terraform.BinaryEnv, bin)
	t.Setenv("TF_CLI_CONFIG_FILE", "/dev/null")
	root, states := t.TempDir(), t.TempDir()
	for dir, n := range map[string]int{"good": 1, "quiet": 0} {
		if err := terraformtest.WriteFixtureLayer(filepath.Join(root, dir), n, filepath.Join(states, dir+".tfstate")); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "version: 1\ndrift: {schedule: \"every 6h\"}\nlayers:\n  - dir: good\n  - dir: quiet\n"
	if err := os.WriteFile(filepath.Join(root, ".strata.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, versionOf(t, bin)
}

// terminal makes stdout a terminal for the test.
func terminal(t *testing.T) {
	old := writerIsTerminal
	writerIsTerminal = func(io.Writer) bool { return true }
	t.Cleanup(func() { writerIsTerminal = old })
}

// strata run plan prints text by default, coloured at a terminal unless
// NO_COLOR, the PR comment with --format markdown, and the documented
// JSON with --format json.
func TestRunPlanFormats(t *testing.T) {
	root, _ := formatCheckout(t)
	const plain = "good: 1 to add, 0 to change, 0 to destroy\n"
	const last = "\nquiet: No changes\n\nPlan: 2 layers, 1 with changes\n"

	code, tr := cli(t, "", "run", "plan", "--repo", root)
	if out := tr.out.String(); code != 0 || !strings.HasPrefix(out, plain) || !strings.HasSuffix(out, last) || strings.Contains(out, "\x1b[") {
		t.Errorf("not a terminal: exit %d, want plain text starting %q, ending %q\n%s", code, plain, last, out)
	}
	if out := tr.out.String(); !strings.Contains(out, "\n    + resource \"terraform_data\" \"r0\" {\n") {
		t.Errorf("the text lacks Terraform's plan, indented:\n%s", out)
	}

	terminal(t)
	code, tr = cli(t, "", "run", "plan", "--repo", root)
	const colored = "\x1b[1mgood\x1b[0m: \x1b[33m1 to add, 0 to change, 0 to destroy\x1b[0m\n"
	if out := tr.out.String(); code != 0 || !strings.HasPrefix(out, colored) || !strings.Contains(out, "    \x1b[32m+\x1b[0m resource \"terraform_data\" \"r0\" {\n") {
		t.Errorf("a terminal: exit %d, want colours\n%q", code, out)
	}
	t.Setenv("NO_COLOR", "1")
	code, tr = cli(t, "", "run", "plan", "--repo", root)
	if out := tr.out.String(); code != 0 || !strings.HasPrefix(out, plain) || strings.Contains(out, "\x1b[") {
		t.Errorf("a terminal with NO_COLOR: exit %d, want no colour\n%q", code, out)
	}

	// The pull request's comment (terraform.PlanComment) without the
	// server's policy findings and next commands.
	code, tr = cli(t, "", "run", "plan", "--repo", root, "--format", "markdown")
	const mdStart = "**Terraform plan:** 2 layers, 1 with changes\n\n" +
		"<details><summary><b>good</b> (workspace <code>default</code>): Plan: 1 to add, 0 to change, 0 to destroy</summary>\n\n" +
		"Changed resources:\n- `terraform_data.r0`\n\n```diff\n"
	const mdEnd = "```\n\n</details>\n\n✅ **quiet** (workspace `default`): no changes.\n\n"
	if out := tr.out.String(); code != 0 || !strings.HasPrefix(out, mdStart) || !strings.HasSuffix(out, mdEnd) || strings.Contains(out, "Next:") {
		t.Errorf("markdown: exit %d, want it to start %q and end %q\n%s", code, mdStart, mdEnd, out)
	}

	code, tr = cli(t, "", "run", "plan", "--repo", root, "--format", "jsno")
	if code != exitUsage || tr.out.Len() > 0 || !strings.Contains(tr.err.String(), `--format "jsno": want text, markdown or json (did you mean "json"?)`) {
		t.Errorf("a wrong format: exit %d\nstdout: %s\nstderr: %s", code, tr.out.String(), tr.err.String())
	}
}

// The JSON report has the shape docs/cli.md documents, for plan, drift
// and apply alike.
func TestRunJSONReport(t *testing.T) {
	root, version := formatCheckout(t)
	terminal(t) // json is never coloured
	planOf := func(layer map[string]any) map[string]any {
		plan, _ := layer["plan"].(map[string]any)
		if text, _ := plan["text"].(string); plan != nil && !strings.Contains(text, "Terraform will perform the following actions") && layer["status"] != "no_changes" && layer["status"] != "clean" {
			t.Errorf("layer %v: plan.text is not Terraform's plan: %q", layer["layer"], text)
		}
		delete(plan, "text")
		return layer
	}
	good := func(status string) map[string]any {
		return map[string]any{"layer": "good", "dir": "good", "workspace": "default", "engine": "terraform", "engine_version": version,
			"status": status, "plan": map[string]any{"summary": "1 to add, 0 to change, 0 to destroy", "has_changes": true,
				"add": 1.0, "change": 0.0, "destroy": 0.0, "import": 0.0, "replaced": []any{}, "destroyed": []any{},
				"changed": []any{"terraform_data.r0"}, "outputs": []any{}}}
	}
	quiet := func(status string) map[string]any {
		return map[string]any{"layer": "quiet", "dir": "quiet", "workspace": "default", "engine": "terraform", "engine_version": version,
			"status": status, "plan": map[string]any{"summary": "No changes", "has_changes": false,
				"add": 0.0, "change": 0.0, "destroy": 0.0, "import": 0.0, "replaced": []any{}, "destroyed": []any{},
				"changed": []any{}, "outputs": []any{}}}
	}
	for _, tc := range []struct {
		args []string
		code int
		want map[string]any
	}{
		{[]string{"run", "plan"}, 0, map[string]any{"format_version": 1.0, "command": "plan", "layers": []any{good("changes"), quiet("no_changes")}}},
		{[]string{"run", "drift"}, exitDrifted, map[string]any{"format_version": 1.0, "command": "drift", "layers": []any{good("drifted"), quiet("clean")}}},
		{[]string{"run", "apply", "--yes"}, 0, map[string]any{"format_version": 1.0, "command": "apply", "layers": []any{good("applied"), quiet("no_changes")}}},
	} {
		code, tr := cli(t, "", append(tc.args, "--repo", root, "--format", "json")...)
		var got map[string]any
		if err := json.Unmarshal([]byte(tr.out.String()), &got); err != nil || code != tc.code {
			t.Fatalf("strata %s: exit %d (want %d), stdout is not one JSON document: %v\n%s\nstderr: %s", tc.args, code, tc.code, err, tr.out.String(), tr.err.String())
		}
		layers, _ := got["layers"].([]any)
		for _, l := range layers {
			planOf(l.(map[string]any))
		}
		if !reflect.DeepEqual(got, tc.want) {
			g, _ := json.MarshalIndent(got, "", "  ")
			w, _ := json.MarshalIndent(tc.want, "", "  ")
			t.Errorf("strata %s --format json:\n%s\nwant:\n%s", tc.args, g, w)
		}
	}
}

// A layer, sync or release the checkout does not have is a wrong command
// line that names the nearest and lists the ones there are; nothing runs.
func TestUnknownNamesListTheKnownOnes(t *testing.T) {
	root := t.TempDir()
	for name, content := range map[string]string{
		"infra/network/main.tf":                  "",
		"infra/base/main.tf":                     "",
		"deploy/overlays/dev/kustomization.yaml": "resources: []\n",
		"charts/api/Chart.yaml":                  "apiVersion: v2\nname: api\nversion: 0.1.0\n",
		".strata.yaml": "version: 1\nlayers:\n  - {name: network, dir: infra/network}\n  - dir: infra/base\n" +
			"syncs:\n  - {name: dev, source: deploy/overlays/dev, dest: {branch: hydrated, path: dev}}\n" +
			"releases:\n  - {name: api, chart: charts/api, namespace: ci}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing may run: a binary that is not there would fail the run
	// with exit status 1.
	t.Setenv(terraform.BinaryEnv, "/nonexistent/terraform")
	file := filepath.Join(root, ".strata.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "plan", "netwrk"}, `no layer "netwrk" in ` + root + ` (did you mean "network"?); its layers: network (infra/network), infra/base`},
		{[]string{"run", "apply", "--yes", "network", "infra/bsae"}, `no layer "infra/bsae" in ` + root + ` (did you mean "infra/base"?); its layers: network (infra/network), infra/base`},
		{[]string{"run", "drift", "storage"}, `no layer "storage" in ` + root + `; its layers: network (infra/network), infra/base`},
		{[]string{"run", "hydrate", "dve"}, `no sync "dve" in ` + file + ` (did you mean "dev"?); its syncs: dev`},
		{[]string{"run", "helm-test", "apj"}, `no release "apj" in ` + file + ` (did you mean "api"?); its releases: api`},
	} {
		code, tr := cli(t, "", append(tc.args, "--repo", root)...)
		if code != exitUsage || tr.out.Len() > 0 || tr.err.String() != "strata: "+tc.want+"\n" {
			t.Errorf("strata %s: exit %d, want %d\nstdout: %s\nstderr: %s\nwant:   strata: %s", tc.args, code, exitUsage, tr.out.String(), tr.err.String(), tc.want)
		}
	}
	// Positive control: a known name gets as far as Terraform, which is
	// missing, and says so before planning anything.
	code, tr := cli(t, "", "run", "plan", "--repo", root, "network")
	want := "strata: layer network: STRATA_TERRAFORM_BIN=/nonexistent/terraform is not an executable file"
	if code != 1 || tr.out.Len() > 0 || !strings.HasPrefix(tr.err.String(), want) || !strings.Contains(tr.err.String(), "terraform.binaries") {
		t.Errorf("a known layer without terraform: exit %d, want 1 with %q\nstdout: %s\nstderr: %s", code, want, tr.out.String(), tr.err.String())
	}
	t.Setenv(terraform.BinaryEnv, "")
	t.Setenv("PATH", t.TempDir())
	code, tr = cli(t, "", "run", "drift", "--repo", root, "infra/base")
	want = "strata: layer infra/base: no terraform on the PATH: install Terraform, or set STRATA_TERRAFORM_BIN to its binary's path " +
		"(the server runs the binaries of terraform_bin and terraform.binaries in its config, STRATA_TERRAFORM_BINARIES)\n"
	if code != 1 || tr.out.Len() > 0 || tr.err.String() != want {
		t.Errorf("no terraform on the PATH: exit %d, want 1\nstdout: %s\nstderr: %s\nwant:   %s", code, tr.out.String(), tr.err.String(), want)
	}
}
