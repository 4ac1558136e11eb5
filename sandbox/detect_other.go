//go:build !linux

package sandbox

// Detect: no sandbox outside Linux.
func Detect(s Settings) Report {
	return Protect(Facts{}, s)
}
