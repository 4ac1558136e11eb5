package hydrate

import (
	"context"
	"testing"

	"strata.dev/strata/engine/hydrate/hydratetest"
)

// BenchmarkHydrate2000 hydrates an overlay of 2,000 resources with patches on
// every Deployment and Service (issue 4, item 9; bench/hydrate compares it
// with the kustomize CLI).
func BenchmarkHydrate2000(b *testing.B) {
	root := b.TempDir()
	source, err := hydratetest.Large(root, 2000)
	if err != nil {
		b.Fatal(err)
	}
	in := Input{
		Sync:         "bench",
		Root:         root,
		Source:       source,
		SourceRepo:   "acme/app",
		SourceCommit: commit,
		Images:       []ImageRule{{Name: "ghcr.io/acme/app", Tag: TagSourceCommit}},
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := Hydrate(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		if res.Resources != 2001 {
			b.Fatalf("resources = %d, want 2001", res.Resources)
		}
	}
}
