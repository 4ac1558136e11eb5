// Command hydrate compares Strata's in-process hydration with the kustomize
// CLI on one generated kustomization (issue 4, item 9).
//
// Each iteration runs both as child processes, alternately, so they share
// whatever else the machine is doing: this binary re-executed in child mode
// for one Hydrate, and `kustomize build` with its output discarded. Time is
// each child's wall time from start to exit, and its CPU time (user + system,
// steadier than wall time on a shared machine); memory is its peak RSS from
// getrusage.
//
//	go run ./bench/hydrate -kustomize bin/kustomize -n 2000 -iterations 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

func main() {
	var (
		n          = flag.Int("n", 2000, "resources in the generated kustomization")
		iterations = flag.Int("iterations", 5, "runs of each tool")
		kustomize  = flag.String("kustomize", "bin/kustomize", "the kustomize CLI")
		child      = flag.Bool("child", false, "internal: hydrate -root/-source once and exit")
		root       = flag.String("root", "", "internal: repository tree for -child")
		source     = flag.String("source", "", "internal: kustomization directory for -child")
	)
	flag.Parse()
	if *child {
		if err := hydrateOnce(*root, *source); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := compare(*n, *iterations, *kustomize); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func hydrateOnce(root, source string) error {
	res, err := hydrate.Hydrate(context.Background(), hydrate.Input{
		Sync:         "bench",
		Root:         root,
		Source:       source,
		SourceRepo:   "acme/app",
		SourceCommit: "0123456789abcdef0123456789abcdef01234567",
		Images:       []hydrate.ImageRule{{Name: "ghcr.io/acme/app", Tag: hydrate.TagSourceCommit}},
	})
	if err != nil {
		return err
	}
	fmt.Println(res.Resources)
	return nil
}

type run struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	maxRSS int64         // bytes
}

func compare(n, iterations int, kustomize string) error {
	if iterations < 1 {
		return errors.New("-iterations must be at least 1")
	}
	kustomize, err := exec.LookPath(kustomize)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	root, err := os.MkdirTemp("", "strata-bench-hydrate-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	source, err := hydratetest.Large(root, n)
	if err != nil {
		return err
	}
	version, _ := exec.Command(kustomize, "version").Output()
	fmt.Printf("input: %d generated resources, overlay %s\nkustomize: %s (%s)\n", n, source, kustomize, strings.TrimSpace(string(version)))

	var strata, cli []run
	for i := range iterations {
		s, err := measure(self, "-child", "-root", root, "-source", source)
		if err != nil {
			return fmt.Errorf("strata: %w", err)
		}
		c, err := measure(kustomize, "build", filepath.Join(root, source))
		if err != nil {
			return fmt.Errorf("kustomize build: %w", err)
		}
		fmt.Printf("run %d: strata %v wall, %v CPU, %d MB; kustomize build %v wall, %v CPU, %d MB\n", i+1,
			s.wall.Round(time.Millisecond), s.cpu.Round(time.Millisecond), s.maxRSS>>20,
			c.wall.Round(time.Millisecond), c.cpu.Round(time.Millisecond), c.maxRSS>>20)
		strata, cli = append(strata, s), append(cli, c)
	}
	wall := func(r run) time.Duration { return r.wall }
	cpu := func(r run) time.Duration { return r.cpu }
	for _, m := range []struct {
		what string
		of   func(run) time.Duration
	}{{"wall", wall}, {"CPU", cpu}} {
		ms, mc := median(strata, m.of), median(cli, m.of)
		fmt.Printf("median %s time: strata %v, kustomize build %v, ratio %.2fx (target <= 1.2x)\n",
			m.what, ms.Round(time.Millisecond), mc.Round(time.Millisecond), float64(ms)/float64(mc))
	}
	fmt.Printf("peak RSS: strata %d MB (target < 300 MB), kustomize build %d MB\n", peak(strata)>>20, peak(cli)>>20)
	return nil
}

func measure(name string, args ...string) (run, error) {
	cmd := exec.Command(name, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return run{}, err
	}
	wall := time.Since(start)
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return run{}, errors.New("no rusage on this platform")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return run{wall: wall, cpu: cpu, maxRSS: ru.Maxrss << 10}, nil // Linux reports KiB
}

func median(runs []run, of func(run) time.Duration) time.Duration {
	d := make([]time.Duration, len(runs))
	for i, r := range runs {
		d[i] = of(r)
	}
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2]
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2
}

func peak(runs []run) int64 {
	var m int64
	for _, r := range runs {
		m = max(m, r.maxRSS)
	}
	return m
}
