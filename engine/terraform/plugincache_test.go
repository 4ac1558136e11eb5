package terraform

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"strata.dev/strata/engine/terraform/testprovider/providertest"
)

// BenchmarkInitPluginCache measures `terraform init` of a layer using the
// test provider, installed from a packed filesystem mirror (a zip, as a
// registry serves it), without the plugin cache (every init unpacks the
// provider into the layer) and with a warm one (init links the cached
// provider). Run with
//
//	go test ./engine/terraform -run '^$' -bench InitPluginCache
func BenchmarkInitPluginCache(b *testing.B) {
	bin, err := FindBinary()
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		b.Skip("no terraform binary")
	}
	provider := providertest.InstallPacked(b)
	world := providertest.NewWorld(b)
	layer := providertest.Layer(world.Dir, providertest.Thing{Name: "a", Value: "1"})
	ctx := context.Background()
	for _, bc := range []struct {
		name  string
		cache bool
	}{{"no-cache", false}, {"cache", true}} {
		b.Run(bc.name, func(b *testing.B) {
			cache := ""
			if bc.cache {
				cache = b.TempDir()
			}
			initOnce := func() {
				dir := b.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(layer), 0o644); err != nil {
					b.Fatal(err)
				}
				s, err := newSession(ctx, Setup{WorkDir: dir, TerraformBin: bin, PluginCacheDir: cache, CLIConfigFile: provider.CLIConfig})
				if err != nil {
					b.Fatal(err)
				}
				defer s.close()
				b.StartTimer()
				err = s.init(ctx)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
			}
			if bc.cache {
				b.StopTimer()
				initOnce() // warms the cache, untimed
				b.ResetTimer()
			}
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				initOnce()
			}
		})
	}
}
