package hydrate

import (
	"context"
	"testing"

	"strata.dev/strata/engine/hydrate/hydratetest"
)

// BenchmarkValidate2000 validates the output of bench/hydrate's overlay of
// 2,000 resources (Deployments, Services and ConfigMaps) against the
// embedded schemas: what validation adds to a hydration of that size
// (docs/benchmarks.md). The first validation in a process also compiles the
// kinds' schemas; b.Loop's later rounds measure the steady state.
func BenchmarkValidate2000(b *testing.B) {
	root := b.TempDir()
	source, err := hydratetest.Large(root, 2000)
	if err != nil {
		b.Fatal(err)
	}
	res, err := Hydrate(context.Background(), Input{Sync: "bench", Root: root, Source: source, SourceRepo: "acme/app", SourceCommit: commit})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, err := Validate(res.Files)
		if err != nil {
			b.Fatal(err)
		}
		if v.Checked != 2001 || len(v.Invalid) != 0 {
			b.Fatalf("checked %d, invalid %v", v.Checked, v.Invalid)
		}
	}
}
