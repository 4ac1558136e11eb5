package intake

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/apptest"
	"strata.dev/strata/store"
)

// nullEnv starts this binary as the null intake (nullIntake, as JSON): the
// least any webhook receiver must do, with nothing after it. It reads the
// delivery and checks its signature as Strata does (go-github's
// ValidatePayloadFromBody) and answers; it decodes nothing. Its
// latency beside a load is the floor under Strata's on this machine, not a
// design.
const nullEnv = "INTAKE_BENCH_NULL"

// nullIntake is the null intake's configuration. With DatabaseURL it also
// records each delivery before it answers, as Strata's intake does, with
// store.RecordDeliveries, one delivery per transaction, on a database of
// its own opened by store.Open (SQLite's and PostgreSQL's settings are
// Strata's): the least a durable intake does. Without it, a delivery it
// answered is lost on a crash.
type nullIntake struct {
	Secret, DatabaseURL, DataDir string
}

// runNullIntake serves the null intake on a free loopback port, prints the
// address, and serves until stdin closes.
func runNullIntake(spec string) int {
	var n nullIntake
	if err := json.Unmarshal([]byte(spec), &n); err != nil {
		fmt.Fprintln(os.Stderr, "null intake:", err)
		return 2
	}
	record := func(context.Context, string) error { return nil }
	if n.DatabaseURL != "" {
		st, err := store.Open(context.Background(), n.DatabaseURL, n.DataDir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer st.Close()
		if _, err := st.DB().Exec(`CREATE TABLE deliveries (id TEXT PRIMARY KEY, event TEXT NOT NULL, received_at BIGINT NOT NULL)`); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		record = func(ctx context.Context, id string) error {
			s := store.RecordDeliveries([]store.Delivery{{ID: id, Event: "issue_comment", ReceivedAt: store.Now()}})
			_, err := st.DB().ExecContext(ctx, st.Rebind(s.SQL), s.Args...)
			return err
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(ln.Addr())
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The read and the check Strata's dispatcher does.
			if _, err := github.ValidatePayloadFromBody(r.Header.Get("Content-Type"), r.Body, r.Header.Get("X-Hub-Signature-256"), []byte(n.Secret)); err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
			if err := record(r.Context(), r.Header.Get("X-GitHub-Delivery")); err != nil {
				http.Error(w, err.Error(), http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusOK)
		}))
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startNullIntake starts the null intake in a process of its own, with a
// database of its own at db when db is not empty, and returns its URL; it
// stops with the benchmark.
func startNullIntake(b *testing.B, db string) string {
	spec, err := json.Marshal(nullIntake{Secret: apptest.WebhookSecret, DatabaseURL: db, DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), nullEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("null intake: %v", err)
	}
	return "http://" + strings.TrimSpace(addr) + "/"
}
