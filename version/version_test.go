package version

import (
	"runtime/debug"
	"testing"
)

func TestOf(t *testing.T) {
	rev := debug.BuildSetting{Key: "vcs.revision", Value: "4198720c0ffee1234567890abcdef0123456789a"}
	clean := debug.BuildSetting{Key: "vcs.modified", Value: "false"}
	dirty := debug.BuildSetting{Key: "vcs.modified", Value: "true"}
	tests := []struct {
		name  string
		stamp string
		info  *debug.BuildInfo
		want  string
	}{
		{"the release stamp wins", "v1.2.3", &debug.BuildInfo{Main: debug.Module{Version: "v1.0.0"}, Settings: []debug.BuildSetting{rev, dirty}}, "v1.2.3"},
		{"go install @version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		{"go install @commit: a pseudo-version", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204154300-4198720c0ffe"}}, "v0.0.0-20261204154300-4198720c0ffe"},
		{"go build in a clean checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{rev, clean}}, "4198720c0ffe"},
		{"go build in a changed checkout", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{rev, dirty}}, "4198720c0ffe+dirty"},
		{"a short revision stays whole", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}}}, "abc123"},
		{"go build -buildvcs=false", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{"modified without a revision", "", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{dirty}}, "dev"},
		{"no build info", "", nil, "dev"},
		{"no build info but stamped", "v2.0.0-rc.1", nil, "v2.0.0-rc.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := of(tt.stamp, tt.info); got != tt.want {
				t.Errorf("of(%q, ...) = %q, want %q", tt.stamp, got, tt.want)
			}
		})
	}
}

// The stamp reaches String the way the release build sets it.
func TestStringStamped(t *testing.T) {
	old := stamp
	t.Cleanup(func() { stamp = old })
	stamp = "v9.9.9"
	if got := String(); got != "v9.9.9" {
		t.Errorf("String() = %q, want v9.9.9", got)
	}
	if got := UserAgent(); got != "Strata/v9.9.9" {
		t.Errorf("UserAgent() = %q, want Strata/v9.9.9", got)
	}
}
