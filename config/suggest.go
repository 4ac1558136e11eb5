package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Nearest is the known word closest to word, for a "did you mean" hint, or
// "" when none is close enough to be what was meant: at most a third of
// word's letters edited (at least one), case and a swap of two neighbours
// counting as one edit. Ties go to the earliest in known.
func Nearest(word string, known []string) string {
	limit := max(1, utf8.RuneCountInString(word)/3)
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(word), strings.ToLower(k)); d < bestDist && k != word {
			best, bestDist = k, d
		}
	}
	return best
}

// didYouMean is the hint that ends an "unknown" error: ` (did you mean
// "workers"?)`, or "".
func didYouMean(word string, known []string) string {
	if s := Nearest(word, known); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// editDistance is the optimal string alignment distance: insertions,
// deletions, substitutions and transpositions of neighbours.
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	rows := make([][]int, len(s)+1)
	for i := range rows {
		rows[i] = make([]int, len(t)+1)
		rows[i][0] = i
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			rows[i][j] = min(rows[i-1][j]+1, rows[i][j-1]+1, rows[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				rows[i][j] = min(rows[i][j], rows[i-2][j-2]+1)
			}
		}
	}
	return rows[len(s)][len(t)]
}

// yamlUnknownField is how yaml.v3's KnownFields names an unknown key.
var yamlUnknownField = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)

// explainUnknownKeys rewrites the unknown-key errors of decoding into a
// value of type t with KnownFields, in file, as `file:3: unknown key
// "workes" (did you mean "workers"?)`; other errors keep yaml's words.
func explainUnknownKeys(file string, err error, t reflect.Type) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %w", file, err)
	}
	keys := map[string][]string{}
	yamlKeys(t, keys)
	lines := make([]string, 0, len(te.Errors))
	for _, e := range te.Errors {
		m := yamlUnknownField.FindStringSubmatch(e)
		if m == nil {
			lines = append(lines, fmt.Sprintf("%s: %s", file, e))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s:%s: unknown key %q%s", file, m[1], m[2], didYouMean(m[2], keys[m[3]])))
	}
	return &keyErrors{lines: lines, err: err}
}

// keyErrors are a config file's decoding errors, one a line, worded for
// the operator; Unwrap keeps yaml's error for callers that test for it.
type keyErrors struct {
	lines []string
	err   error
}

func (e *keyErrors) Error() string { return strings.Join(e.lines, "\n") }
func (e *keyErrors) Unwrap() error { return e.err }

// yamlKeys collects the YAML keys of each struct type reachable from t,
// under the type's name as yaml.v3 prints it ("config.Server"); inline
// structs' keys are their parent's.
func yamlKeys(t reflect.Type, into map[string][]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	if _, done := into[t.String()]; done {
		return
	}
	into[t.String()] = structKeys(t, into)
}

func structKeys(t reflect.Type, into map[string][]string) []string {
	keys := []string{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case name == "-" || !f.IsExported():
			continue
		case strings.Contains(opts, "inline") && f.Type.Kind() == reflect.Struct:
			keys = append(keys, structKeys(f.Type, into)...)
			continue
		case name == "":
			name = strings.ToLower(f.Name)
		}
		keys = append(keys, name)
		yamlKeys(f.Type, into)
	}
	return keys
}
