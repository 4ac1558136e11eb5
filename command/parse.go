package command

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Parse reads the command of a PR comment. It returns nil, nil when the
// comment holds no Strata command (no leading slash, or another bot's command
// such as /lgtm), and a *UsageError when a Strata command has bad arguments.
func Parse(body string) (Command, error) {
	words := commandWords(body)
	if len(words) == 0 || !strings.HasPrefix(words[0], "/") {
		return nil, nil
	}
	name, args := strings.TrimPrefix(words[0], "/"), words[1:]
	p := parser{name: name}
	switch name {
	case "plan":
		layers, err := p.names("layer", args)
		return orNil(Plan{Layers: layers}, err)
	case "apply":
		layers, err := p.names("layer", args)
		return orNil(Apply{Layers: layers}, err)
	case "unlock":
		layers, err := p.names("layer", args)
		return orNil(Unlock{Layers: layers}, err)
	case "approve-policies":
		layers, err := p.names("layer", args)
		return orNil(ApprovePolicies{Layers: layers}, err)
	case "cancel":
		// "/cancel network" would read as cancelling only network's plan,
		// which /cancel does not do: refuse words rather than ignore them.
		if len(args) > 0 {
			return nil, p.errorf("`/cancel` takes no arguments: it cancels every queued and running plan of this pull request.")
		}
		return Cancel{}, nil
	case "takeover":
		return p.takeover(args)
	case "release":
		return p.release(args)
	case "helm-test":
		return p.helmTest(args)
	case "help":
		// Words after /help ("/help please") are harmless and ignored.
		return Help{}, nil
	}
	return nil, nil
}

func orNil(c Command, err error) (Command, error) {
	if err != nil {
		return nil, err
	}
	return c, nil
}

// commandWords splits the first non-blank line of body into words. Up to three
// leading spaces are allowed, as in Markdown; four, or a tab, make a code block.
func commandWords(body string) []string {
	body = strings.ReplaceAll(body, "\r\n", "\n")
	for _, line := range strings.FieldsFunc(body, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) > 3 || strings.HasPrefix(trimmed, "\t") {
			return nil
		}
		return strings.Fields(trimmed)
	}
	return nil
}

type parser struct{ name string }

func (p parser) errorf(format string, args ...any) error {
	return &UsageError{Command: p.name, Msg: fmt.Sprintf(format, args...)}
}

// names checks the words as names of kind ("layer", "release", ...), drops
// repeats and refuses flags.
func (p parser) names(kind string, words []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			return nil, p.errorf("Unknown flag `%s`.", quote(w))
		}
		if err := CheckName(w); err != nil {
			return nil, p.errorf("Bad %s name: %v.", kind, err)
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	if len(out) > MaxNames {
		return nil, p.errorf("Too many %ss: %d, at most %d.", kind, len(out), MaxNames)
	}
	return out, nil
}

func (p parser) takeover(args []string) (Command, error) {
	var c Takeover
	switch len(args) {
	case 0:
	case 1:
		if looksLikeDuration(args[0]) {
			d, err := p.duration(args[0])
			if err != nil {
				return nil, err
			}
			c.Duration = d
			break
		}
		sync, err := p.sync(args[0])
		if err != nil {
			return nil, err
		}
		c.Sync = sync
	case 2:
		sync, err := p.sync(args[0])
		if err != nil {
			return nil, err
		}
		if !looksLikeDuration(args[1]) {
			return nil, p.errorf("`%s` is not a duration; use one like `2h`, `30m`, `1h30m` or `1d`.", quote(args[1]))
		}
		d, err := p.duration(args[1])
		if err != nil {
			return nil, err
		}
		c.Sync, c.Duration = sync, d
	default:
		return nil, p.errorf("Too many arguments: takeover takes a sync and a duration.")
	}
	return c, nil
}

func (p parser) release(args []string) (Command, error) {
	switch len(args) {
	case 0:
		return Release{}, nil
	case 1:
		sync, err := p.sync(args[0])
		if err != nil {
			return nil, err
		}
		return Release{Sync: sync}, nil
	}
	return nil, p.errorf("Too many arguments: release takes at most one sync.")
}

// sync checks a sync name. A sync name that reads as a duration would make
// "/takeover NAME" ambiguous, so it is refused.
func (p parser) sync(word string) (string, error) {
	if looksLikeDuration(word) {
		return "", p.errorf("`%s` is a duration, not a sync name; the sync comes first.", quote(word))
	}
	names, err := p.names("sync", []string{word})
	if err != nil {
		return "", err
	}
	return names[0], nil
}

func (p parser) duration(word string) (time.Duration, error) {
	d, err := ParseDuration(word)
	if err != nil {
		return 0, p.errorf("Bad duration `%s`: %v.", quote(word), err)
	}
	if d <= 0 {
		return 0, p.errorf("The duration must be positive, not `%s`.", quote(word))
	}
	return d, nil
}

func (p parser) helmTest(args []string) (Command, error) {
	var releases, filters []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "--filter":
			if i+1 == len(args) || strings.HasPrefix(args[i+1], "-") {
				return nil, p.errorf("`--filter` needs a test name.")
			}
			i++
			filters = append(filters, args[i])
		case strings.HasPrefix(w, "--filter="):
			v := strings.TrimPrefix(w, "--filter=")
			if v == "" || strings.HasPrefix(v, "-") {
				return nil, p.errorf("`--filter` needs a test name.")
			}
			filters = append(filters, v)
		case strings.HasPrefix(w, "-"):
			return nil, p.errorf("Unknown flag `%s`.", quote(w))
		default:
			releases = append(releases, w)
		}
	}
	releases, err := p.names("release", releases)
	if err != nil {
		return nil, err
	}
	filters, err = p.names("test", filters)
	if err != nil {
		return nil, err
	}
	return HelmTest{Releases: releases, Filters: filters}, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_.@/-]+$`)

// CheckName reports why s cannot be the name of a layer, sync, release or
// test: names use letters, digits and "-_./@", are at most MaxNameLen bytes,
// and, read as a path, stay inside the repository.
func CheckName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("empty name")
	case len(s) > MaxNameLen:
		return fmt.Errorf("longer than %d characters", MaxNameLen)
	case !nameRE.MatchString(s):
		return fmt.Errorf("`%s` may only use letters, digits and `-_./@`", quote(s))
	case strings.HasPrefix(s, "/"):
		return fmt.Errorf("`%s` is an absolute path", s)
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == ".." {
			return fmt.Errorf("`%s` leaves the repository", s)
		}
	}
	return nil
}

var daysRE = regexp.MustCompile(`^(\d+)d(.*)$`)

// ParseDuration reads a Go duration ("2h", "30m", "1h30m"), also with a
// leading number of days: "1d" is 24h and "1d12h" is 36h. Any number of
// days a time.Duration holds: words.Duration writes "41666d16h" for a
// million hours, which must read back.
func ParseDuration(s string) (time.Duration, error) {
	m := daysRE.FindStringSubmatch(s)
	if m == nil {
		return time.ParseDuration(s)
	}
	const day = 24 * time.Hour
	days, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil || days > math.MaxInt64/int64(day) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	d := time.Duration(days) * day
	if m[2] == "" {
		return d, nil
	}
	rest, err := time.ParseDuration(m[2])
	if err != nil || rest < 0 || rest > math.MaxInt64-d {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return d + rest, nil
}

// looksLikeDuration tells a duration from a sync name: a word that parses as a
// duration (even "0" or "-5m", refused later as not positive) is a duration.
func looksLikeDuration(s string) bool {
	_, err := ParseDuration(s)
	return err == nil
}

// quote shortens a word for a reply and keeps backticks from breaking Markdown.
func quote(s string) string {
	s = strings.ReplaceAll(s, "`", "'")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "..."
	}
	return s
}
