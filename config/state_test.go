package config

import (
	"strings"
	"testing"
)

func TestStateConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		addr    string
		keep    int
		problem string
	}{
		{"defaults", nil, "127.0.0.1:9092", 100, ""},
		{"a port of the tests' choosing", map[string]string{"STRATA_STATE_ADDR": "127.0.0.1:0"}, "127.0.0.1:0", 100, ""},
		{"off", map[string]string{"STRATA_STATE_ADDR": "off"}, "off", 100, ""},
		{"IPv6 loopback", map[string]string{"STRATA_STATE_ADDR": "[::1]:9092"}, "[::1]:9092", 100, ""},
		{"every interface is refused", map[string]string{"STRATA_STATE_ADDR": ":9092"}, ":9092", 100, "listens on loopback only"},
		{"a public address is refused", map[string]string{"STRATA_STATE_ADDR": "10.0.0.5:9092"}, "10.0.0.5:9092", 100, "listens on loopback only"},
		{"retention", map[string]string{"STRATA_STATE_RETENTION": "5"}, "127.0.0.1:9092", 5, ""},
		{"negative retention", map[string]string{"STRATA_STATE_RETENTION": "-1"}, "127.0.0.1:9092", -1, "keep at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s State
			if err := s.applyEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }); err != nil {
				t.Fatal(err)
			}
			s.applyDefaults()
			if s.Addr != tt.addr || s.Retention != tt.keep {
				t.Errorf("state = %+v, want addr %s, retention %d", s, tt.addr, tt.keep)
			}
			p := strings.Join(s.problems(), "; ")
			if (tt.problem == "") != (p == "") || !strings.Contains(p, tt.problem) {
				t.Errorf("problems = %q, want %q", p, tt.problem)
			}
		})
	}
}
