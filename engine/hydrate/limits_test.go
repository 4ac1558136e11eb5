package hydrate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/engine/hydrate/hydratetest"
)

func TestShapeAndLimits(t *testing.T) {
	limits := Limits{Builds: 10, Depth: 3}
	for _, c := range []struct {
		name string
		kids []shape
		want shape
		err  string
	}{
		{"no bases", nil, shape{builds: 1, depth: 1}, ""},
		{"two leaf bases", []shape{{1, 1}, {1, 1}}, shape{builds: 3, depth: 2}, ""},
		{"a deep and a wide base", []shape{{2, 2}, {5, 1}}, shape{builds: 8, depth: 3}, ""},
		{"a diamond's level: the same base twice", []shape{{5, 3}, {5, 3}}, shape{builds: 11, depth: 4},
			"k.yaml: over a build limit: it builds 11 kustomizations, counting each base and component as often as it is included (bases included many times over?); a build may build 10"},
		{"too deep", []shape{{3, 3}}, shape{builds: 4, depth: 4},
			"k.yaml: over a build limit: its bases and components nest 4 deep; a build may nest 3"},
		{"sums stop short of overflowing", []shape{{1 << 40, 2}, {1 << 40, 2}}, shape{builds: 1 << 40, depth: 3},
			"k.yaml: over a build limit: it builds 1099511627776 kustomizations, counting each base and component as often as it is included (bases included many times over?); a build may build 10"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := withKids(c.kids)
			if got != c.want {
				t.Errorf("shape = %+v, want %+v", got, c.want)
			}
			err := limits.exceeds("k.yaml", got)
			if msg := fmt.Sprint(err); (c.err == "" && err != nil) || (c.err != "" && msg != c.err) {
				t.Errorf("err = %v, want %q", err, c.err)
			}
			if c.err != "" && !errors.Is(err, ErrLimit) {
				t.Errorf("err is not ErrLimit")
			}
		})
	}
}

func diamondInput(t *testing.T, levels int) Input {
	t.Helper()
	in := devInput(writeRepo(t, hydratetest.Diamond(levels)))
	in.Source = "deploy/diamond"
	in.Images = nil
	return in
}

// A diamond of bases 24 levels deep would build 2^25 kustomizations: it is
// refused before the build starts, naming the first kustomization over
// the limit. A small diamond builds (the positive control).
func TestDiamondOfBasesIsRefusedBeforeTheBuild(t *testing.T) {
	res, err := Hydrate(context.Background(), diamondInput(t, 3))
	if err != nil || res.Resources != 8 {
		t.Fatalf("3 levels: %v, want 8 resources", err)
	}

	_, err = Hydrate(context.Background(), diamondInput(t, 24))
	t.Logf("refused: %v", err)
	want := `hydrate sync "dev" (deploy/diamond): deploy/l11a/kustomization.yaml: over a build limit: it builds 3071 kustomizations, ` +
		`counting each base and component as often as it is included (bases included many times over?); a build may build 2000`
	if !errors.Is(err, ErrLimit) || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestNestingDeeperThanTheLimitIsRefused(t *testing.T) {
	chain := func(n int) Input {
		files := map[string]string{"deploy/b0/kustomization.yaml": "resources: [cm.yaml]\n",
			"deploy/b0/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n"}
		for i := 1; i <= n; i++ {
			files["deploy/b"+strconv.Itoa(i)+"/kustomization.yaml"] = "resources: [../b" + strconv.Itoa(i-1) + "]\n"
		}
		in := devInput(writeRepo(t, files))
		in.Source = "deploy/b" + strconv.Itoa(n)
		in.Images = nil
		return in
	}
	if _, err := Hydrate(context.Background(), chain(19)); err != nil {
		t.Fatalf("20 deep: %v", err)
	}
	_, err := Hydrate(context.Background(), chain(20))
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "deploy/b20/kustomization.yaml: over a build limit: its bases and components nest 21 deep; a build may nest 20") {
		t.Errorf("err = %v, want the depth limit naming deploy/b20/kustomization.yaml", err)
	}
}

// What the check before the build cannot see is counted as kustomize
// goes: the bytes it reads, the resources and the YAML it makes.
func TestBuildLimitsNameTheLimitAndTheFile(t *testing.T) {
	big := strings.Repeat("x", 2<<20)
	for _, c := range []struct {
		name   string
		limits Limits
		files  map[string]string
		want   string
	}{
		{"bytes read", Limits{ReadBytes: 1 << 20}, map[string]string{
			"deploy/evil/kustomization.yaml": "configMapGenerator:\n- name: big\n  files: [big.txt]\n",
			"deploy/evil/big.txt":            big,
		}, "deploy/evil/big.txt: over a build limit: the build read more than 1048576 bytes of files"},
		{"resources", Limits{Objects: 2}, map[string]string{
			"deploy/evil/kustomization.yaml": "resources: [cms.yaml]\n",
			"deploy/evil/cms.yaml":           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
		}, "deploy/evil/: over a build limit: the build made 3 resources; a build may make 2"},
		{"YAML made", Limits{OutputBytes: 100}, map[string]string{
			"deploy/evil/kustomization.yaml": "configMapGenerator:\n- name: big\n  literals: [k=" + strings.Repeat("y", 200) + "]\n",
		}, "deploy/evil/: over a build limit: the build made more than 100 bytes of YAML"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := devInput(writeRepo(t, c.files))
			in.Source, in.Images, in.Limits = "deploy/evil", nil, c.limits
			_, err := Hydrate(context.Background(), in)
			if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant ErrLimit with %q", err, c.want)
			}
			in.Limits = Limits{}
			if _, err := Hydrate(context.Background(), in); err != nil {
				t.Errorf("within the default limits: %v", err)
			}
		})
	}
}

// unbounded lets a build run into its timeout or its memory.
var unbounded = Limits{Builds: 1 << 30, Depth: 1 << 10, Objects: 1 << 30, ReadBytes: 1 << 40, OutputBytes: 1 << 40}

// A build that needs more memory than its bound dies in its own process,
// and the error says which bound; within the bound, it builds.
func TestBuildOverItsMemoryIsStopped(t *testing.T) {
	in := devInput(writeRepo(t, map[string]string{
		"deploy/evil/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/evil/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata: {k: " + strings.Repeat("x", 16<<20) + "}\n",
	}))
	in.Source, in.Images = "deploy/evil", nil
	in.Limits = Limits{MemoryBytes: 48 << 20}
	_, err := Hydrate(context.Background(), in)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "deploy/evil: over a build limit: the build needed more than 50331648 bytes of memory") {
		t.Errorf("err = %v, want the memory limit", err)
	}
	in.Limits = Limits{}
	if _, err := Hydrate(context.Background(), in); err != nil {
		t.Errorf("within the default limits: %v", err)
	}
}

// children lists the processes whose parent is this one.
func children(t *testing.T) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	self := strconv.Itoa(os.Getpid())
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, not ')'.
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) > 1 && fields[1] == self {
			out = append(out, pid)
		}
	}
	return out
}

// A build that runs past its timeout is stopped, not abandoned: when
// Hydrate returns, the process that ran kustomize is gone and nothing of
// this process runs kustomize any more, so the next push's build does not
// add to the CPU a PR pins. (Before, krusty ran on in a goroutine.)
func TestTimedOutBuildStopsComputing(t *testing.T) {
	in := diamondInput(t, 18) // 262,144 resources: minutes of kustomize
	in.Limits = unbounded
	in.Timeout = 2 * time.Second

	seen := map[int]bool{}
	done := make(chan error, 1)
	go func() {
		_, err := Hydrate(context.Background(), in)
		done <- err
	}()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-tick.C:
			for _, pid := range children(t) {
				seen[pid] = true
			}
		}
	}
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want the timeout", err)
	}
	if len(seen) == 0 {
		t.Errorf("no build process was seen: the build ran in this process")
	}
	for pid := range seen {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("build process %d still exists after the timeout (kill 0: %v)", pid, err)
		}
	}
	if left := children(t); len(left) > 0 {
		t.Errorf("processes %v of this one outlive the build", left)
	}
	stacks := make([]byte, 1<<20)
	if s := string(stacks[:runtime.Stack(stacks, true)]); strings.Contains(s, "krusty.(*Kustomizer).Run") {
		t.Errorf("a goroutine of this process still runs kustomize:\n%s", s)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		t.Logf("the build process used %v of CPU before it was killed", time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
	}
}
