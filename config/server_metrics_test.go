package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// /metrics listens on loopback unless the operator says where, in the file
// or the environment; "off" serves none, and an address that is not one is
// refused at start, naming the variable.
func TestServerConfigMetricsAddr(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte("metrics_addr: \"10.0.0.5:9100\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		want       string
		off        bool
		err        string
	}{
		{name: "default", want: "127.0.0.1:9090"},
		{name: "file", file: file, want: "10.0.0.5:9100"},
		{name: "environment over file", file: file, env: map[string]string{"STRATA_METRICS_ADDR": ":9091"}, want: ":9091"},
		{name: "off", env: map[string]string{"STRATA_METRICS_ADDR": "off"}, want: "off", off: true},
		{name: "no port", env: map[string]string{"STRATA_METRICS_ADDR": "localhost"}, err: `STRATA_METRICS_ADDR "localhost"`},
		{name: "a URL", env: map[string]string{"STRATA_METRICS_ADDR": "http://127.0.0.1:9090/metrics"}, err: `STRATA_METRICS_ADDR "http://127.0.0.1:9090/metrics"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := LoadServer(tc.file, envOf(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to name %s", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.MetricsAddr != tc.want || cfg.MetricsOff() != tc.off {
				t.Errorf("metrics addr %q off %v, want %q off %v", cfg.MetricsAddr, cfg.MetricsOff(), tc.want, tc.off)
			}
		})
	}
}
