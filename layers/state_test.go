package layers

import (
	"strings"
	"testing"

	"strata.dev/strata/config"
)

func TestStateUseOf(t *testing.T) {
	tests := []struct {
		name      string
		mode      config.StateMode
		backend   bool
		serverOff bool
		managed   bool
		refuse    string // in the refusal, "" for none
		note      string // in the log's note
	}{
		{"no state: and no backend: Strata keeps it", config.StateAuto, false, false, true, "", ""},
		{"no state: and a backend: the layer's own", config.StateAuto, true, false, false, "", "own backend"},
		{"managed and no backend", config.StateManaged, false, false, true, "", ""},
		{"managed and a backend: refused", config.StateManaged, true, false, false, "declares a backend", ""},
		{"own and no backend: Terraform's local state", config.StateOwn, false, false, false, "", ""},
		{"own and a backend", config.StateOwn, true, false, false, "", ""},
		{"server off, no backend: none kept, said", config.StateAuto, false, true, false, "", "no state"},
		{"server off, managed: refused", config.StateManaged, false, true, false, "keeps no state", ""},
		{"server off, own backend", config.StateAuto, true, true, false, "", "own backend"},
	}
	for _, tt := range tests {
		got := stateUseOf("net", tt.mode, tt.backend, tt.serverOff)
		if got.Managed != tt.managed || (tt.refuse == "") != (got.Refuse == "") || !strings.Contains(got.Refuse, tt.refuse) ||
			!strings.Contains(got.Note, tt.note) {
			t.Errorf("%s: %+v", tt.name, got)
		}
	}
}
