package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// JSON encodes v as JSON with every string in it, keys included, masked by
// mask before it is escaped. Masking the encoded text instead would miss a
// secret that holds a quote, a backslash, a newline or a character JSON
// escapes: it is stored as \", \\, \n or \u003c, not as itself.
func JSON(v any, mask func(string) string) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers come back as written
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	return json.Marshal(maskTree(tree, mask))
}

func maskTree(v any, mask func(string) string) any {
	switch t := v.(type) {
	case string:
		return mask(t)
	case []any:
		for i := range t {
			t[i] = maskTree(t[i], mask)
		}
		return t
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, sub := range t {
			out[mask(k)] = maskTree(sub, mask)
		}
		return out
	default:
		return v
	}
}

// escapedForms are the ways a value is written inside a JSON or HCL string
// by common encoders, when they differ from the value: Go's encoding/json
// (HTML characters escaped, and not), strconv.Quote as Terraform prints a
// string, and ASCII-only JSON (\u00e9). Add registers them too, so a
// secret that a tool printed escaped is still masked.
func escapedForms(s string) []string {
	var out []string
	add := func(e string) {
		if e != s && len(e) >= MinLength {
			out = append(out, e)
		}
	}
	html, _ := json.Marshal(s)
	add(string(html[1 : len(html)-1]))
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	plain := strings.TrimSuffix(b.String(), "\n")
	add(plain[1 : len(plain)-1])
	add(asciiJSON(plain[1 : len(plain)-1]))
	quoted := fmt.Sprintf("%q", s)
	add(quoted[1 : len(quoted)-1])
	return out
}

// asciiJSON rewrites the non-ASCII characters of a JSON string body as
// \uXXXX escapes (surrogate pairs beyond the BMP), as ASCII-only encoders do.
func asciiJSON(body string) string {
	var b strings.Builder
	for _, r := range body {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
