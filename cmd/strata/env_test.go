package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/app"
	"strata.dev/strata/config"
)

// A mistyped STRATA_* variable stops `config validate` and `serve` with
// the name meant, before anything starts. Before, STRATA_DATABSE_URL was
// ignored and the server ran on the default SQLite file.
func TestUnknownVariableStopsServeAndValidate(t *testing.T) {
	serveEnv(t, "STRATA_DATABSE_URL", "postgres://postgres@127.0.0.1:5432/test")
	want := "unknown environment variable STRATA_DATABSE_URL (did you mean STRATA_DATABASE_URL?)\n" +
		"Strata reads only the STRATA_* variables it knows: unset or rename these"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, args := range [][]string{{"config", "validate"}, {"config", "validate", t.TempDir()}, {"serve"}} {
		var out lockedBuffer
		err := strata(ctx, &out, args...)
		if err == nil || err.Error() != want {
			t.Fatalf("strata %s = %v, want:\n%s\noutput:\n%s", args, err, want, out.String())
		}
		if strings.Contains(out.String(), "valid") || strings.Contains(out.String(), "setup") {
			t.Errorf("strata %s went on:\n%s", args, out.String())
		}
	}
	// Positive control: the variable spelt right is taken.
	os.Unsetenv("STRATA_DATABSE_URL")
	t.Setenv("STRATA_DATABASE_URL", "sqlite://strata.db")
	var out lockedBuffer
	if err := strata(ctx, &out, "config", "validate"); err != nil || out.String() != "server config is valid (no --config file: the STRATA_* environment and defaults)\n" {
		t.Fatalf("config validate = %v\n%s", err, out.String())
	}
}

// In a checkout, `config validate` says which files it validated: the
// server config, and the checkout's .strata.yaml, whose error names it.
func TestConfigValidateInACheckoutNamesTheFiles(t *testing.T) {
	serveEnv(t)
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.WriteFile(".strata.yaml", []byte("version: 1\nlayers:\n  - dir: .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	err := strata(context.Background(), &out, "config", "validate")
	want := "server config is valid (no --config file: the STRATA_* environment and defaults)\n.strata.yaml is valid: 1 layer, 0 syncs, 0 releases\n"
	if err != nil || out.String() != want {
		t.Fatalf("config validate = %v\n%s\nwant:\n%s", err, out.String(), want)
	}
	if err := os.WriteFile(".strata.yaml", []byte("version: 1\nlayers:\n  - dri: .\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = lockedBuffer{}
	err = strata(context.Background(), &out, "config", "validate")
	if err == nil || !strings.HasPrefix(err.Error(), ".strata.yaml:3: ") || !strings.Contains(err.Error(), `"dri"`) {
		t.Fatalf("config validate of a bad .strata.yaml = %v, want its file and line\n%s", err, out.String())
	}
	out = lockedBuffer{}
	file := filepath.Join(dir, ".strata.yaml")
	if err := strata(context.Background(), &out, "config", "validate", dir); err == nil || !strings.HasPrefix(err.Error(), file+":3: ") {
		t.Fatalf("config validate DIR = %v, want %s:3", err, file)
	}
}

// STRATA_LOG_FORMAT=text makes the server's log text; the default is JSON.
func TestServeLogFormat(t *testing.T) {
	for format, line := range map[string]*regexp.Regexp{
		"":     regexp.MustCompile(`(?m)^\{"level":"warn",.*Open http://127\.0\.0\.1:\d+/setup\?token=`),
		"text": regexp.MustCompile(`(?m)^\S+ WRN .*Open http://127\.0\.0\.1:\d+/setup\?token=`),
	} {
		serveEnv(t, "STRATA_LOG_FORMAT", format)
		ctx, cancel := context.WithCancel(context.Background())
		out := &watchedLog{want: "/setup?token=", seen: make(chan struct{})}
		done := make(chan error, 1)
		go func() { done <- strata(ctx, out, "serve") }()
		select {
		case <-out.seen:
		case err := <-done:
			t.Fatalf("STRATA_LOG_FORMAT=%q: serve ended: %v\n%s", format, err, out.String())
		case <-time.After(20 * time.Second):
			t.Errorf("STRATA_LOG_FORMAT=%q: no setup URL logged in 20s", format)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("STRATA_LOG_FORMAT=%q: serve: %v", format, err)
		}
		if !line.MatchString(out.String()) {
			t.Errorf("STRATA_LOG_FORMAT=%q: no line like %s in the log:\n%s", format, line, out.String())
		}
	}
}

// watchedLog closes seen once the log holds want.
type watchedLog struct {
	lockedBuffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchedLog) Write(p []byte) (int, error) {
	n, err := w.lockedBuffer.Write(p)
	if strings.Contains(w.lockedBuffer.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

// The log level drops what is below it.
func TestNewLoggerLevel(t *testing.T) {
	for level, want := range map[string]string{
		"debug": "debug info warn error",
		"info":  "info warn error",
		"warn":  "warn error",
		"error": "error",
	} {
		var b bytes.Buffer
		log := app.NewLogger(&b, config.Log{Level: level, Format: "json"}, false)
		log.Debug().Msg("debug")
		log.Info().Msg("info")
		log.Warn().Msg("warn")
		log.Error().Msg("error")
		var got []string
		for _, m := range regexp.MustCompile(`"message":"(\w+)"`).FindAllStringSubmatch(b.String(), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("level %s logged %q, want %q", level, got, want)
		}
	}
}
