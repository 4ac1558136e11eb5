package words

import (
	"testing"
	"time"
)

func TestPlural(t *testing.T) {
	for _, tt := range []struct {
		n    int
		want string
	}{{0, "0 syncs"}, {1, "1 sync"}, {2, "2 syncs"}, {-1, "-1 syncs"}} {
		if got := Count(tt.n, "sync", "syncs"); got != tt.want {
			t.Errorf("Count(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
	if got := Plural(1, "Apply this layer?", "Apply these layers?"); got != "Apply this layer?" {
		t.Errorf("Plural(1) = %q", got)
	}
	if got := Plural(3, "Apply this layer?", "Apply these layers?"); got != "Apply these layers?" {
		t.Errorf("Plural(3) = %q", got)
	}
}

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{250 * time.Millisecond, "250ms"},
		{1400 * time.Microsecond, "1ms"},
		{time.Second, "1s"},
		{1340 * time.Millisecond, "1.3s"},
		{9960 * time.Millisecond, "10s"},
		{12400 * time.Millisecond, "12s"},
		{45 * time.Second, "45s"},
		{time.Minute, "1m"},
		{90 * time.Second, "1m30s"},
		{5 * time.Minute, "5m"},
		{2 * time.Hour, "2h"},
		{90 * time.Minute, "1h30m"},
		{2*time.Hour + 5*time.Second, "2h5s"},
		{12 * time.Hour, "12h"},
		{24 * time.Hour, "1d"},
		{36 * time.Hour, "1d12h"},
		{720 * time.Hour, "30d"},
		{-5 * time.Minute, "-5m"},
	} {
		if got := Duration(tt.d); got != tt.want {
			t.Errorf("Duration(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}
