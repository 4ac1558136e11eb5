package config

import (
	"fmt"
	"slices"
)

// Log is how the server logs: log.level and log.format, or
// STRATA_LOG_LEVEL and STRATA_LOG_FORMAT.
type Log struct {
	// Level is the least severe level written: debug, info (default),
	// warn or error.
	Level string `yaml:"level"`
	// Format is json (default: one object a line, for log collectors) or
	// text (aligned, for a person at a terminal).
	Format string `yaml:"format"`
}

// The values of log.level and log.format.
var (
	LogLevels  = []string{"debug", "info", "warn", "error"}
	LogFormats = []string{"json", "text"}
)

func (l *Log) applyEnv(getenv func(string) (string, bool)) {
	if v, ok := getenv("STRATA_LOG_LEVEL"); ok && v != "" {
		l.Level = v
	}
	if v, ok := getenv("STRATA_LOG_FORMAT"); ok && v != "" {
		l.Format = v
	}
}

func (l *Log) applyDefaults() {
	if l.Level == "" {
		l.Level = "info"
	}
	if l.Format == "" {
		l.Format = "json"
	}
}

func (l *Log) problems() []string {
	var out []string
	if !slices.Contains(LogLevels, l.Level) {
		out = append(out, fmt.Sprintf("log.level (STRATA_LOG_LEVEL) %q: want debug, info, warn or error%s", l.Level, didYouMean(l.Level, LogLevels)))
	}
	if !slices.Contains(LogFormats, l.Format) {
		out = append(out, fmt.Sprintf("log.format (STRATA_LOG_FORMAT) %q: want json or text%s", l.Format, didYouMean(l.Format, LogFormats)))
	}
	return out
}
