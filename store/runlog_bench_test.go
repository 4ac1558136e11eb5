package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// BenchmarkAppendLog stores 16 MB of a plan's log in batches of size
// bytes, as a LogWriter does while Terraform prints.
func BenchmarkAppendLog(b *testing.B) {
	line := strings.Repeat(" ", 12) + strings.Repeat("0", 99) + "\n"
	for _, d := range storetest.Dialects {
		for _, size := range []int{64 << 10, 1 << 20, 4 << 20} {
			batch := strings.Repeat(line, size/len(line))
			b.Run(fmt.Sprintf("%s/%dKiB", d, size>>10), func(b *testing.B) {
				st := storetest.Open(b, d)
				st.LimitLogs(1 << 40)
				b.SetBytes(16 << 20)
				for b.Loop() {
					run, err := st.StartRun(context.Background(), store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra"})
					if err != nil {
						b.Fatal(err)
					}
					for n := 0; n < 16<<20; n += len(batch) {
						if err := st.AppendLog(context.Background(), run.ID, batch); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
