package config

import (
	"strings"
	"testing"
)

// The log's level and format: json and info unless set, the environment
// over the file, and a value not known refused with the one meant.
func TestLogConfig(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		want    Log
		problem string
	}{
		{nil, Log{Level: "info", Format: "json"}, ""},
		{map[string]string{"STRATA_LOG_LEVEL": "debug", "STRATA_LOG_FORMAT": "text"}, Log{Level: "debug", Format: "text"}, ""},
		{map[string]string{"STRATA_LOG_LEVEL": "warn"}, Log{Level: "warn", Format: "json"}, ""},
		{map[string]string{"STRATA_LOG_LEVEL": "warning"}, Log{}, `log.level (STRATA_LOG_LEVEL) "warning": want debug, info, warn or error`},
		{map[string]string{"STRATA_LOG_LEVEL": "wran"}, Log{}, `log.level (STRATA_LOG_LEVEL) "wran": want debug, info, warn or error (did you mean "warn"?)`},
		{map[string]string{"STRATA_LOG_FORMAT": "jsno"}, Log{}, `log.format (STRATA_LOG_FORMAT) "jsno": want json or text (did you mean "json"?)`},
	} {
		cfg, err := LoadServerFrom(&Server{}, envOf(tc.env))
		if tc.problem != "" {
			if err == nil || !strings.Contains(err.Error(), "\n  "+tc.problem+"\n") && !strings.HasSuffix(err.Error(), "\n  "+tc.problem) {
				t.Errorf("env %v: err = %v, want the problem %q", tc.env, err, tc.problem)
			}
			continue
		}
		if err != nil || cfg.Log != tc.want {
			t.Errorf("env %v: log %+v, %v; want %+v", tc.env, cfg.Log, err, tc.want)
		}
	}
}
