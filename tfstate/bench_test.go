package tfstate_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tfstate"
)

// bigState is a state of n terraform_data resources, as Terraform writes it.
func bigState(n, serial int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"version":4,"terraform_version":"1.5.7","serial":%d,"lineage":"bench","outputs":{},"resources":[`, serial)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"mode":"managed","type":"terraform_data","name":"r%d","provider":"provider[\"terraform.io/builtin/terraform\"]",`+
			`"instances":[{"schema_version":0,"attributes":{"id":"00000000-0000-0000-0000-%012d","input":{"value":"value of resource %d","type":"string"},`+
			`"output":{"value":"value of resource %d","type":"string"},"triggers_replace":null},"sensitive_attributes":[]}]}`, i, i, i, i)
	}
	b.WriteString(`],"check_results":null}`)
	return b.Bytes()
}

// BenchmarkStateBackend: what the http backend costs Terraform per
// operation on a 10,000-resource state, on SQLite and PostgreSQL, against
// the local backend's file read and write (docs/benchmarks.md). The
// retention is 5 versions, so that the writes past the fifth prune one, as
// every write does on a layer past its 100th.
func BenchmarkStateBackend(b *testing.B) {
	state := bigState(10000, 1)
	b.Logf("state: %d resources, %.1f MB", 10000, float64(len(state))/1e6)
	for _, d := range storetest.Dialects {
		b.Run(string(d), func(b *testing.B) { benchmarkStateBackend(b, d) })
	}
	path := filepath.Join(b.TempDir(), "terraform.tfstate")
	b.Run("local/write", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := os.WriteFile(path, state, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("local/read", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := os.ReadFile(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchmarkStateBackend(b *testing.B, d store.Dialect) {
	ctx := context.Background()
	st := storetest.Open(b, d)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: tfstate.Handler(st, tfstate.Options{Retention: 5})}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	base := "http://" + ln.Addr().String()
	key := store.StateKey{Repo: "acme/infra", Layer: "big"}
	runID := liveRun(b, st, 1, key.Repo, key.Layer)
	cred, err := tfstate.Issue(ctx, st, base, key, runID, store.StateWrite)
	if err != nil {
		b.Fatal(err)
	}
	do := func(method string, body []byte) {
		req, _ := http.NewRequest(method, cred.Address, bytes.NewReader(body))
		req.SetBasicAuth(cred.Username, cred.Password)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode >= 300 {
			b.Fatalf("%s: %d", method, res.StatusCode)
		}
	}
	do("POST", bigState(10000, 1))
	serial := 1
	b.Run("http/write", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			// Only the request is timed, not making the state.
			b.StopTimer()
			serial++
			s := bigState(10000, serial)
			b.StartTimer()
			do("POST", s)
		}
	})
	b.Run("http/read", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			do("GET", nil)
		}
	})
	b.Run("http/lock+unlock", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			do("LOCK", []byte(`{"ID":"bench"}`))
			do("UNLOCK", []byte(`{"ID":"bench"}`))
		}
	})
}
