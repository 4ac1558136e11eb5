package app

import (
	"io"
	"time"

	"github.com/rs/zerolog"

	"strata.dev/strata/config"
)

// NewLogger is the server's log on w, as the config's log.level and
// log.format say: JSON lines by default, for collectors; text for a person,
// coloured only when color (the caller knows whether w is a terminal).
func NewLogger(w io.Writer, l config.Log, color bool) zerolog.Logger {
	if l.Format == "text" {
		w = zerolog.ConsoleWriter{Out: w, NoColor: !color, TimeFormat: time.RFC3339}
	}
	level, err := zerolog.ParseLevel(l.Level)
	if err != nil || l.Level == "" {
		level = zerolog.InfoLevel // the config refused anything else
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}
