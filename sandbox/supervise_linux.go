//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// defaultGrace is the program's time to stop after an interrupt when the
// Spec names none.
const defaultGrace = 10 * time.Second

// supervise starts the confined side and stays until it ends, then ends
// every process the run started, wherever it went (double forks, setsid):
// as a child subreaper, every orphan of the run becomes its child, and it
// kills all its descendants before it exits with the program's status. It
// ends the run at once when the server that started it dies (its
// parent-death signal), and forwards an interrupt, killing the run when
// the program has not stopped after the grace period.
//
// Init runs on the main thread, locked to the main goroutine: the thread
// that forks the program lives as long as this process, so the program's
// parent-death signal fires only when the supervisor dies.
func supervise(s Spec, raw string) (int, error) {
	// Captured first: the pids the signal guard protects.
	server := os.Getppid()
	// terraform-exec gives the launcher SIGKILL as parent-death signal; a
	// catchable one lets it take the run's processes along.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return 0, fmt.Errorf("parent-death signal: %w", err)
	}
	// The server may have died before the line above: then nothing runs.
	if s.Parent != 0 && os.Getppid() != s.Parent {
		return 0, errors.New("the server that started this run is gone")
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return 0, fmt.Errorf("child subreaper: %w", err)
	}
	if s.GuardSignals {
		s.Protected = []int{server, os.Getpid()}
		b, err := json.Marshal(s)
		if err != nil {
			return 0, err
		}
		raw = string(b)
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	sys := &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if s.PIDNamespace {
		// When the namespace's first process (the program) ends, the
		// kernel kills every other process in it.
		sys.Cloneflags = syscall.CLONE_NEWPID
	}
	pid, err := syscall.ForkExec(self, append([]string{self}, os.Args[1:]...), &syscall.ProcAttr{
		Env:   append(os.Environ(), confineEnv+"="+raw),
		Files: []uintptr{0, 1, 2},
		Sys:   sys,
	})
	if err != nil {
		return 0, fmt.Errorf("start the confined program: %w", err)
	}
	exited := make(chan syscall.WaitStatus, 1)
	go reap(pid, exited)
	grace := s.StopGrace
	if grace <= 0 {
		grace = defaultGrace
	}
	var stop <-chan time.Time
	for {
		select {
		case ws := <-exited:
			killDescendants()
			return exitCode(ws), nil
		case sig := <-sigs:
			if sig == syscall.SIGTERM && s.Parent != 0 && os.Getppid() != s.Parent {
				// The server died: nobody waits for this run any more.
				killDescendants()
				return 128 + int(syscall.SIGTERM), nil
			}
			_ = syscall.Kill(pid, syscall.SIGINT)
			if stop == nil {
				stop = time.After(grace)
			}
		case <-stop:
			killDescendants() // the program among them: exited follows
		}
	}
}

// reap waits for every child, the program's orphans included, so none
// stays a zombie; it reports the program's end.
func reap(pid int, exited chan<- syscall.WaitStatus) {
	for {
		var ws syscall.WaitStatus
		p, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return
		}
		if p == pid {
			exited <- ws
		}
	}
}

func exitCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// killDescendants kills every live descendant of this process until none
// is left: a process that forks while it is being killed is found on the
// next pass.
func killDescendants() {
	for {
		pids := Descendants(os.Getpid())
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(time.Millisecond) // let the killed exit before the next pass
	}
}

// Descendants are the live (not zombie) processes below root, from /proc:
// what a run left behind, for the supervisor and for tests that check it.
func Descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		ppid, live := parentOf(pid)
		if live {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// parentOf reads a process's parent from /proc/PID/stat; live is false
// for a zombie or a process that is gone.
func parentOf(pid int) (ppid int, live bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
		return 0, false
	}
	ppid, err = strconv.Atoi(f[1])
	return ppid, err == nil
}
