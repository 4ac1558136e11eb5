package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/tooltest"
)

// transcript records stdout and stderr apart, and the order in which
// their writes came, to tell streamed output from output at the end.
type transcript struct {
	mu       sync.Mutex
	out, err strings.Builder
	order    strings.Builder // stdout and stderr, interleaved as written
}

type stream struct {
	t  *transcript
	to *strings.Builder
}

func (s stream) Write(p []byte) (int, error) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.to.Write(p)
	return s.t.order.Write(p)
}

// cli runs `strata ARGS...` in this process with stdin, as main does, and
// returns its exit status. Flags and contexts set by earlier runs are reset.
func cli(t *testing.T, stdin string, args ...string) (int, *transcript) {
	t.Helper()
	ctx := context.Background()
	var reset func(c *cobra.Command)
	reset = func(c *cobra.Command) {
		c.SetContext(ctx)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if s, ok := f.Value.(pflag.SliceValue); ok {
				s.Replace(nil)
			} else {
				f.Value.Set(f.DefValue)
			}
			f.Changed = false
		})
		for _, sub := range c.Commands() {
			reset(sub)
		}
	}
	reset(root)
	tr := &transcript{}
	code := execute(ctx, args, strings.NewReader(stdin), stream{tr, &tr.out}, stream{tr, &tr.err})
	return code, tr
}

// A mistyped command is a usage error (exit status 2) that names the
// command meant, on stderr, where a script's log shows it.
func TestUnknownCommandsAreUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"servve"}, `unknown command "servve" for "strata" (did you mean "serve"?)`},
		{[]string{"run", "aply"}, `unknown command "aply" for "strata run" (did you mean "apply"?)`},
		{[]string{"config", "valdate"}, `unknown command "valdate" for "strata config" (did you mean "validate"?)`},
		{[]string{"run", "bogus"}, `unknown command "bogus" for "strata run"` + "\nRun 'strata run --help' for usage."},
		{[]string{"version", "extra"}, `unknown command "extra" for "strata version"`},
		{[]string{"run", "apply", "--yess"}, "unknown flag: --yess"},
		{[]string{"run", "helm-test"}, "strata run helm-test takes one RELEASE, got 0 arguments"},
		{[]string{"run", "hydrate", "dev", "qa"}, "strata run hydrate takes one SYNC, got 2 arguments"},
		{[]string{"config", "validate", "a", "b"}, "strata config validate takes at most one DIR, got 2 arguments"},
	} {
		code, tr := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(tr.err.String(), tc.want) || tr.out.Len() > 0 {
			t.Errorf("strata %s: exit %d, want %d with %q on stderr\nstdout: %s\nstderr: %s",
				strings.Join(tc.args, " "), code, exitUsage, tc.want, tr.out.String(), tr.err.String())
		}
	}
	if code, tr := cli(t, "", "run"); code != 0 || !strings.Contains(tr.out.String(), "Available Commands") {
		t.Errorf("strata run: exit %d, want its help on stdout\nstdout: %s\nstderr: %s", code, tr.out.String(), tr.err.String())
	}
}

// Results go to stdout and nothing else does.
func TestResultsGoToStdout(t *testing.T) {
	repo := t.TempDir()
	if err := os.WriteFile(filepath.Join(repo, ".strata.yaml"), []byte("version: 1\nlayers:\n  - dir: .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "strata dev\nsandbox: "},
		{[]string{"config", "validate", repo}, repo + "/.strata.yaml is valid: 1 layer, 0 syncs, 0 releases\n"},
		{[]string{"config", "validate", t.TempDir()}, "has no .strata.yaml"},
	} {
		code, tr := cli(t, "", tc.args...)
		if code != 0 || !strings.Contains(tr.out.String(), tc.want) || tr.err.Len() > 0 {
			t.Errorf("strata %s: exit %d, want %q on stdout and nothing on stderr\nstdout: %s\nstderr: %s",
				strings.Join(tc.args, " "), code, tc.want, tr.out.String(), tr.err.String())
		}
	}
}

// A typo in the server config is an error naming the file, the line and
// the key meant.
func TestServerConfigTypoNamesTheKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte("addr: \":9000\"\nworkes: 8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, tr := cli(t, "", "config", "validate", "--config", file)
	want := "strata: " + file + `:2: unknown key "workes" (did you mean "workers"?)`
	if code != 1 || !strings.Contains(tr.err.String(), want) || tr.out.Len() > 0 {
		t.Errorf("exit %d, want 1 with %q on stderr\nstdout: %s\nstderr: %s", code, want, tr.out.String(), tr.err.String())
	}
}

// applyCheckout is a checkout of four layers, in this order: `bad` does
// not plan, `app` depends on it, `good` has a resource to create and
// `quiet` none. Its states are in the returned dir.
func applyCheckout(t *testing.T) (root, states string) {
	t.Helper()
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	t.Setenv(terraform.BinaryEnv, bin)
	t.Setenv("TF_CLI_CONFIG_FILE", "/dev/null")
	root, states = t.TempDir(), t.TempDir()
	for dir, n := range map[string]int{"bad": 1, "app": 1, "good": 1, "quiet": 0} {
		if err := terraformtest.WriteFixtureLayer(filepath.Join(root, dir), n, filepath.Join(states, dir+".tfstate")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "bad", "broken.tf"), []byte("output \"x\" {\n  value = var.missing\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "version: 1\nlayers:\n  - dir: bad\n  - dir: app\n    depends_on: [bad]\n  - dir: good\n  - dir: quiet\n"
	if err := os.WriteFile(filepath.Join(root, ".strata.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, states
}

// Without --yes and with no one at stdin, strata run apply refuses before
// planning, saying to pass --yes; nothing is applied.
func TestRunApplyWithoutYesNeedsATerminal(t *testing.T) {
	root, states := applyCheckout(t)
	code, tr := cli(t, "yes\n", "run", "apply", "--repo", root, "good")
	if code != exitUsage || !strings.Contains(tr.err.String(), "pass --yes") || tr.out.Len() > 0 {
		t.Fatalf("exit %d, want %d saying to pass --yes\nstdout: %s\nstderr: %s", code, exitUsage, tr.out.String(), tr.err.String())
	}
	if _, err := os.Stat(filepath.Join(states, "good.tfstate")); !os.IsNotExist(err) {
		t.Fatalf("good was applied: %v", err)
	}
}

// strata run apply --yes on layers of which one fails to plan: the others
// are applied, Terraform's output streams to stderr while it runs, and the
// summary on stdout says of each layer whether it was applied, and why not:
// as text by default, as the markdown of a PR comment when asked.
func TestRunApplySaysWhichLayersWereApplied(t *testing.T) {
	for _, tc := range []struct {
		format, after string
		want          []string
	}{
		{"", "Plan: 4 layers, 2 with changes, 1 failed\n\n", []string{
			"bad: not applied: its plan failed: ", // then Terraform's error
			"app: not applied: refused: it depends on bad, whose plan failed",
			"good: applied: 1 to add, 0 to change, 0 to destroy",
			"quiet: not applied: no changes",
			"Apply: 4 layers, 1 applied, 2 not applied",
		}},
		{"markdown", "**Terraform apply:**\n", []string{
			"- ❌ `bad`: not applied: its plan failed: ",
			"- ⛔ `app`: not applied: refused: it depends on `bad`, whose plan failed",
			"- ✅ `good`: applied: 1 to add, 0 to change, 0 to destroy",
			"- ➖ `quiet`: not applied: no changes",
		}},
	} {
		root, states := applyCheckout(t)
		code, tr := cli(t, "", "run", "apply", "--yes", "--repo", root, "--format="+tc.format)
		if code != 1 {
			t.Fatalf("--format=%s: exit %d, want 1 (a layer is not applied)\nstdout: %s\nstderr: %s", tc.format, code, tr.out.String(), tr.err.String())
		}
		out := tr.out.String()
		_, summary, found := strings.Cut(out, tc.after)
		lines := strings.Split(strings.TrimSpace(summary), "\n")
		if !found || len(lines) != len(tc.want) {
			t.Fatalf("--format=%s: summary after %q:\n%s\nwant %d lines like:\n%s\nstdout:\n%s", tc.format, tc.after, summary, len(tc.want), strings.Join(tc.want, "\n"), out)
		}
		for i, line := range lines {
			if line != tc.want[i] && (i != 0 || !strings.HasPrefix(line, tc.want[i]) || len(line) == len(tc.want[i])) {
				t.Errorf("--format=%s: summary line %d:\n%s\nwant:\n%s", tc.format, i, line, tc.want[i])
			}
		}
		if !strings.Contains(tr.err.String(), "strata: 2 of 4 layers not applied") {
			t.Errorf("stderr does not end with the count:\n%s", tr.err.String())
		}
		// Streamed: the apply's output reached stderr before the summary
		// reached stdout.
		order := tr.order.String()
		if i, j := strings.Index(order, "Apply complete!"), strings.Index(order, tc.want[1]); i < 0 || j < i || strings.Contains(out, "Apply complete!") {
			t.Errorf("Terraform's apply output is not streamed to stderr before the summary:\n%s", order)
		}
		for dir, want := range map[string]bool{"good": true, "app": false, "bad": false} {
			if _, err := os.Stat(filepath.Join(states, dir+".tfstate")); (err == nil) != want {
				t.Errorf("%s applied: %v, want %v", dir, err == nil, want)
			}
		}
	}
}

// At a terminal, the layers to apply are listed and anything but "yes"
// applies none of them.
func TestRunApplyAsksFirst(t *testing.T) {
	root, states := applyCheckout(t)
	old := stdinIsTerminal
	stdinIsTerminal = func(io.Reader) bool { return true }
	defer func() { stdinIsTerminal = old }()
	code, tr := cli(t, "y\n", "run", "apply", "--repo", root, "good", "quiet")
	if want := "Will apply:\n  good: 1 to add, 0 to change, 0 to destroy\nWill not apply:\n  quiet: not applied: no changes\nApply this layer? Only 'yes' is accepted: "; !strings.Contains(tr.err.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, tr.err.String())
	}
	if code != 1 || !strings.Contains(tr.out.String(), "\ngood: not applied: not confirmed\n") {
		t.Errorf("answer y: exit %d, want 1 and good not confirmed\nstdout: %s", code, tr.out.String())
	}
	if _, err := os.Stat(filepath.Join(states, "good.tfstate")); !os.IsNotExist(err) {
		t.Fatalf("good was applied without a yes: %v", err)
	}
	code, tr = cli(t, "yes\n", "run", "apply", "--repo", root, "good")
	if code != 0 || !strings.Contains(tr.out.String(), "\ngood: applied: 1 to add") {
		t.Errorf("answer yes: exit %d\nstdout: %s\nstderr: %s", code, tr.out.String(), tr.err.String())
	}
}
