package hydrate

import (
	"fmt"
	"time"

	"sigs.k8s.io/yaml"
)

// SyncState is the content of SyncStateFile: where the hydrated manifests
// came from, which digests were pinned, and the takeover, if any.
type SyncState struct {
	SourceRepo   string        `json:"sourceRepo"`
	Source       string        `json:"source"`
	SourceCommit string        `json:"sourceCommit"`
	Pinned       []PinnedImage `json:"pinnedImages,omitempty"`
	// Takeover is set by the caller while a PR holds the sync.
	Takeover *Takeover `json:"takeover,omitempty"`
}

// Takeover records that a pull request's head is hydrated into the sync's
// destination until Until.
type Takeover struct {
	PR    int       `json:"pr"`
	By    string    `json:"by,omitempty"`
	Head  string    `json:"head,omitempty"`
	Until time.Time `json:"until"`
}

// Marshal renders the state as YAML with a fixed key order.
func (s SyncState) Marshal() []byte {
	out, err := yaml.Marshal(s)
	if err != nil {
		// Only strings, ints, times and slices of them: this cannot fail.
		panic(fmt.Sprintf("marshal sync state: %v", err))
	}
	return out
}

// ParseSyncState reads a SyncStateFile, refusing unknown keys.
func ParseSyncState(b []byte) (SyncState, error) {
	var s SyncState
	if err := yaml.UnmarshalStrict(b, &s); err != nil {
		return SyncState{}, fmt.Errorf("parse %s: %w", SyncStateFile, err)
	}
	return s, nil
}
