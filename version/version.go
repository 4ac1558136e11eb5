// Package version says which Strata this binary is, for people: `strata
// version`, the web UI's footer, /readyz, the start log and the User-Agent
// sent to GitHub all print String().
package version

import (
	"runtime/debug"
)

// stamp is set by the release build:
//
//	go build -ldflags "-X strata.dev/strata/version.stamp=v1.2.3" ./cmd/strata
var stamp string

// String is the version of this binary: the release build's stamp, else
// the module version `go install strata.dev/strata/cmd/strata@vX` records,
// else the commit it was built from (with +dirty when the tree had
// changes), else "dev".
func String() string {
	info, _ := debug.ReadBuildInfo() // nil when the binary has none
	return of(stamp, info)
}

// of decides the version from the stamp and the build's own record; it is
// separate from String so tests can hand it any BuildInfo.
func of(stamp string, info *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if info == nil {
		return "dev"
	}
	// A `go build` inside the module records "(devel)"; a `go install
	// ...@vX` (or a dependency's build) records the module's version.
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var revision string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if revision == "" {
		return "dev"
	}
	// Twelve characters, as Go's pseudo-versions and GitHub's links use.
	if len(revision) > 12 {
		revision = revision[:12]
	}
	if modified {
		revision += "+dirty"
	}
	return revision
}

// UserAgent is what Strata sends to GitHub, which asks every client to
// name itself: "Strata/v1.2.3".
func UserAgent() string { return "Strata/" + String() }
