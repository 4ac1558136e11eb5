//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkLauncher is what the sandbox adds to each Terraform command: a
// program that does nothing (/bin/true) started directly, through the
// launcher alone with `terraform.sandbox: off` (one exec more), and
// confined with what this host gives (the supervisor, then the confined
// side, then the program). A plan runs one such command (two when its init
// is not reused); docs/benchmarks.md has the figures. Run:
//
//	go test ./sandbox -run '^$' -bench Launcher
func BenchmarkLauncher(b *testing.B) {
	dir, err := os.MkdirTemp("", "sandbox-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil { // the sandbox's user execs it too
		b.Fatal(err)
	}
	alone := filepath.Join(dir, LauncherName)
	build := exec.Command("go", "build", "-o", alone, "strata.dev/strata/cmd/"+LauncherName)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build %s: %v\n%s", LauncherName, err, out)
	}
	program, err := exec.LookPath("true")
	if err != nil {
		b.Fatal(err)
	}
	if program, err = filepath.Abs(program); err != nil {
		b.Fatal(err)
	}
	r := Detect(Settings{Mode: BestEffort})
	run := func(b *testing.B, exe string, spec *Spec) {
		var env []string
		if spec != nil {
			spec.Program, spec.Parent = program, os.Getpid()
			name, value := spec.Variable()
			env = []string{name + "=" + value}
		}
		for b.Loop() {
			cmd := exec.Command(exe)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", exe, err, out)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, program, nil) })
	b.Run("unconfined", func(b *testing.B) { run(b, alone, &Spec{Unconfined: true}) })
	b.Run("confined", func(b *testing.B) {
		spec := r.Spec(program, 0)
		spec.ReadWrite = []string{dir}
		run(b, alone, &spec)
	})
}
