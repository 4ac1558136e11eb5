package mdfence

import "testing"

func TestFenceOutlastsBackticksInTheText(t *testing.T) {
	if f := For("a ``` b ````"); f != "`````" {
		t.Errorf("For = %q", f)
	}
}
