package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"strata.dev/strata/config"
)

// The formats of a run's report on stdout (--format).
const (
	formatText     = "text"     // for a person: plain words, coloured at a terminal
	formatMarkdown = "markdown" // what Strata would post on the PR
	formatJSON     = "json"     // for programs: the shape of docs/cli.md, one document
)

var formats = []string{formatText, formatMarkdown, formatJSON}

// output is how a report is written: its format and whether it is coloured.
type output struct {
	format string
	color  bool
}

// outputFor decides the report's output. Text is the default whether or
// not stdout is a terminal: a pipe (less, grep, tee) gets the words the
// screen would show, and a program asks for json, a PR comment for
// markdown. Only colour depends on the terminal: on when stdout is one,
// unless NO_COLOR is set to anything (no-color.org) or TERM is dumb.
func outputFor(format string, stdoutTTY bool, noColor, termName string) (output, error) {
	if format == "" {
		format = formatText
	}
	found := false
	for _, f := range formats {
		found = found || f == format
	}
	if !found {
		hint := ""
		if near := config.Nearest(format, formats); near != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", near)
		}
		return output{}, fmt.Errorf("--format %q: want text, markdown or json%s", format, hint)
	}
	return output{format: format, color: format == formatText && colorOn(stdoutTTY, noColor, termName)}, nil
}

// colorOn says whether what goes to a writer may be coloured: it is a
// terminal, NO_COLOR is unset or empty, and TERM is not dumb.
func colorOn(tty bool, noColor, termName string) bool {
	return tty && noColor == "" && termName != "dumb"
}

// outputOf is outputFor with this process's stdout and environment.
func outputOf(cmd *cobra.Command, format string) (output, error) {
	o, err := outputFor(format, writerIsTerminal(cmd.OutOrStdout()), os.Getenv("NO_COLOR"), os.Getenv("TERM"))
	if err != nil {
		return o, usageError(cmd, err)
	}
	return o, nil
}

// addFormatFlag gives a run command --format.
func addFormatFlag(c *cobra.Command, format *string) {
	c.Flags().StringVar(format, "format", formatText, "report format on stdout: text, markdown (the PR comment) or json (docs/cli.md)")
}

// writerIsTerminal says whether w (stdout, stderr) is a terminal; a
// variable so that tests can be one.
var writerIsTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// paint colours text for a terminal with ANSI SGR codes, or leaves it
// alone.
type paint bool

const (
	ansiBold   = "1"
	ansiRed    = "31"
	ansiGreen  = "32"
	ansiYellow = "33"
)

func (p paint) with(code, s string) string {
	if !p || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// indent puts prefix before every non-empty line of s.
func indent(w io.Writer, prefix, s string) {
	for _, line := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if line == "" {
			fmt.Fprintln(w)
			continue
		}
		fmt.Fprintln(w, prefix+line)
	}
}
