package e2e

import (
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/store"
)

// A stuck Terraform state lock (a run killed while holding it, planted
// here) and /unlock: a writer's /unlock of the layer releases their PR's
// layer lock as always and is told the state lock needs an admin, which
// stays; an admin's /unlock of the layer clears it and says so.
func TestUnlockClearsAStuckStateLockForAnAdminOnly(t *testing.T) {
	e := startLayers(t, apptest.Options{Configure: stateOnAnyPort}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("wanda", "write")
	e.Repo.SetPermission("olivia", "admin")
	pr := e.openPR("grow", "wanda", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "wanda", "/plan")
	e.completed(pr.HeadSHA(), networkPlan)
	e.WaitIdle(layersWait)

	st := e.Server.Store()
	ctx := t.Context()
	key := store.StateKey{Repo: "acme/infra", Layer: network}
	if _, ok, err := st.LockState(ctx, key, store.StateLock{ID: "stuck", RunID: 77, Info: []byte(`{"ID":"stuck","Operation":"OperationTypeApply"}`)}); err != nil || !ok {
		t.Fatalf("plant a stuck state lock: %v, %v", ok, err)
	}

	e.comment(pr.Number, "wanda", "/unlock "+network)
	e.commentWith(pr.Number, "@wanda released the lock on `"+network+"` and discarded this PR's plans of it. Other pull requests can plan it now. "+
		"Terraform's state lock on `"+network+"` (taken by run 77) stays: @wanda has write permission on this repository; clearing a state lock needs admin or higher.")
	e.WaitIdle(layersWait)
	if l, err := st.StateLockOf(ctx, key); err != nil || l == nil || l.ID != "stuck" {
		t.Fatalf("after a writer's /unlock the state lock is %+v, %v; want it kept", l, err)
	}
	if l, err := st.Lock(ctx, "acme/infra", network); err == nil {
		t.Errorf("after a writer's /unlock the layer lock is still held: %+v", l)
	}

	e.comment(pr.Number, "olivia", "/unlock "+network)
	e.commentWith(pr.Number, "@olivia cleared Terraform's state lock on `"+network+"` (taken by run 77).")
	e.WaitIdle(layersWait)
	if l, err := st.StateLockOf(ctx, key); err != nil || l != nil {
		t.Errorf("after an admin's /unlock the state lock is %+v, %v; want none", l, err)
	}
}
