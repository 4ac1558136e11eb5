//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/sandbox/sandboxtest"
)

// probesEnv makes the test binary a probe: run as the confined program, it
// tries each probe and prints one line per probe, "ok" or the error.
// daemonEnv makes it a daemon: it writes its pid to the file named and
// sleeps.
// serverEnv makes it a server: it starts the launcher with the Spec it
// holds, itself as the parent, and waits.
const (
	probesEnv = "SANDBOX_TEST_PROBES"
	daemonEnv = "SANDBOX_TEST_DAEMON"
	serverEnv = "SANDBOX_TEST_SERVER"
	// serverPIDEnv is the server's pid, for the probes that name it {server}.
	serverPIDEnv = "SANDBOX_TEST_SERVER_PID"
)

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(daemonEnv); ok {
		fmt.Println(os.Getpid())
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	if raw, ok := os.LookupEnv(serverEnv); ok {
		os.Unsetenv(serverEnv)
		os.Exit(serve(raw))
	}
	if probes, ok := os.LookupEnv(probesEnv); ok {
		for _, p := range strings.Split(probes, "\n") {
			fmt.Printf("%s -> %s\n", p, probe(strings.ReplaceAll(p, "{server}", os.Getenv(serverPIDEnv))))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe plays one attack of a pull request's program and says how it went.
func probe(p string) string {
	op, arg, _ := strings.Cut(p, ":")
	switch op {
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			return "unset"
		}
		return "set to " + v
	case "hang": // a run that goes on until something ends it
		fmt.Println("hang -> running")
		time.Sleep(time.Hour)
	case "daemon": // a double-forked, setsid daemon that writes its pid to arg
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), daemonEnv+"="+arg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := cmd.StdoutPipe()
		if err == nil {
			if err = cmd.Start(); err == nil {
				// Its pid line says it runs; the probe then exits at once.
				pid, _ := bufio.NewReader(out).ReadString('\n')
				err = os.WriteFile(arg, []byte(strings.TrimSpace(pid)), 0o644)
			}
		}
		if err != nil {
			return err.Error()
		}
		return "ok"
	}
	return sandboxtest.Attack(p)
}

// serve plays the server: it runs the launcher with the Spec in raw, as
// its parent, and waits for it.
func serve(raw string) int {
	var s Spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fmt.Println(err)
		return 2
	}
	s.Parent = os.Getpid()
	name, value := s.Variable()
	cmd := exec.Command(s.Program)
	// The probes name the server as {server}: its pid is known only now.
	cmd.Env = append(os.Environ(), name+"="+value, serverPIDEnv+"="+strconv.Itoa(os.Getpid()))
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}
