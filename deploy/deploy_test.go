package deploy

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The App manifest asks for what the design says Strata needs, no more.
func TestAppManifest(t *testing.T) {
	var m struct {
		Permissions map[string]string `json:"default_permissions"`
		Events      []string          `json:"default_events"`
	}
	if err := json.Unmarshal(AppManifest, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"checks": "write", "contents": "write", "issues": "write", "pull_requests": "write", "metadata": "read", "members": "read", "merge_queues": "read"}
	if len(m.Permissions) != len(want) {
		t.Fatalf("permissions %v, want %v", m.Permissions, want)
	}
	for k, v := range want {
		if m.Permissions[k] != v {
			t.Errorf("permission %s = %q, want %q", k, m.Permissions[k], v)
		}
	}
	for _, e := range []string{"issue_comment", "pull_request", "pull_request_review", "push", "check_run", "merge_group"} {
		if !slices.Contains(m.Events, e) {
			t.Errorf("manifest does not subscribe to %s", e)
		}
	}
}

func TestKubernetesManifestsParse(t *testing.T) {
	data, err := os.ReadFile("kubernetes/strata.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	n := 0
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Fatalf("%d objects, want a Service and a StatefulSet", n)
	}
}
