package tfstate

import (
	"testing"

	"strata.dev/strata/store"
)

func TestAuthorize(t *testing.T) {
	net := store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "default"}
	read := &store.StateCredential{Key: net, RunID: 1, Mode: store.StateRead}
	write := &store.StateCredential{Key: net, RunID: 2, Mode: store.StateWrite}
	tests := []struct {
		name   string
		cred   *store.StateCredential
		live   bool
		op     string
		key    store.StateKey
		status int
	}{
		{"plan reads its state", read, true, "GET", net, 200},
		{"plan locks its state", read, true, "LOCK", net, 200},
		{"plan unlocks its state", read, true, "UNLOCK", net, 200},
		{"plan writes its state", read, true, "POST", net, 403},
		{"apply writes its state", write, true, "POST", net, 200},
		{"apply reads its state", write, true, "GET", net, 200},
		{"another layer", write, true, "GET", store.StateKey{Repo: "acme/infra", Layer: "db", Workspace: "default"}, 403},
		{"another workspace", write, true, "POST", store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "prod"}, 403},
		{"another repository", write, true, "GET", store.StateKey{Repo: "acme/other", Layer: "net", Workspace: "default"}, 403},
		{"run ended or slot released", write, false, "GET", net, 403},
		{"unknown token", nil, false, "GET", net, 401},
		{"delete a workspace", write, true, "DELETE", net, 405},
	}
	for _, tt := range tests {
		if got := authorize(tt.cred, tt.live, tt.op, tt.key); got.Status != tt.status {
			t.Errorf("%s: status %d (%s), want %d", tt.name, got.Status, got.Why, tt.status)
		}
	}
}
