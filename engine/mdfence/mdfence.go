// Package mdfence picks the Markdown code fence for a text that the engines
// quote in their reports (Terraform's plans and errors, Helm's test logs).
package mdfence

import "strings"

// For returns a backtick fence longer than any run of backticks in s, so
// that s cannot close it.
func For(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
