package worker

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"

	"strata.dev/strata/redact"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// planLines is about n bytes of the large-plan benchmark's output: heredoc
// lines of 99 zeros, indented as Terraform prints them.
func planLines(n int) string {
	line := strings.Repeat(" ", 12) + strings.Repeat("0", 99) + "\n"
	return strings.Repeat(line, n/len(line))
}

// benchLogWriter streams 16 MB through a LogWriter a line at a time, as
// terraform-exec hands Terraform's output over, with the server's webhook
// secret to mask: what the reader of a large plan's output spends before
// the store (bench/logs measures the whole server).
func benchLogWriter(b *testing.B, appendLog func(context.Context, string) error) {
	text := planLines(16 << 20)
	server, _ := redact.New(nil)
	server.Add("apptest-webhook-secret")
	d := &Deps{Redactor: server}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		l := d.logWriter(context.Background(), appendLog)
		// terraform-exec writes a line at a time
		r := bufio.NewReader(strings.NewReader(text))
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				l.Write(line)
			}
			if err == io.EOF {
				break
			}
		}
		l.Close()
	}
}

func BenchmarkLogWriterDiscard(b *testing.B) {
	benchLogWriter(b, func(context.Context, string) error { return nil })
}

func BenchmarkLogWriterSQLite(b *testing.B) {
	st := storetest.Open(b, store.SQLite)
	run, err := st.StartRun(context.Background(), store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan"})
	if err != nil {
		b.Fatal(err)
	}
	st.LimitLogs(1 << 40)
	benchLogWriter(b, func(ctx context.Context, text string) error { return st.AppendLog(ctx, run.ID, text) })
}
