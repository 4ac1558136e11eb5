package tfstate_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tfstate"
	"strata.dev/strata/tooltest"
)

// engines are the binaries under test: Terraform and OpenTofu.
var engines = []struct {
	kind terraform.Kind
	env  string
}{{terraform.KindTerraform, "STRATA_TERRAFORM_BIN"}, {terraform.KindTofu, "STRATA_TOFU_BIN"}}

// engineBin is the binary of a kind; without it the test skips, or fails
// when tools are required.
func engineBin(t *testing.T, kind terraform.Kind, env string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		tooltest.Missing(t, string(kind)+" ($"+env+")", os.ErrNotExist)
	}
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, string(kind)+" ("+bin+")", err)
	}
	return bin
}

// backendServer serves the backend on a loopback port of its own, as
// the server does, and returns its base URL.
func backendServer(t testing.TB, st *store.Store) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: tfstate.Handler(st, tfstate.Options{})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// liveRun is a run that holds the layer's slot, as a plan or apply job does.
func liveRun(t testing.TB, st *store.Store, job int64, repo, layer string) int64 {
	t.Helper()
	ctx := context.Background()
	r, err := st.StartRun(ctx, store.Run{JobID: job, Attempt: 1, Kind: "layer_plan", Repo: repo, Target: layer, PR: int(job), HeadSHA: "sha" + layer})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := st.TakeSlot(ctx, repo, layer, r.ID); !ok || err != nil {
		t.Fatalf("slot: %v %v", ok, err)
	}
	return r.ID
}

const twoResources = `
resource "terraform_data" "a" { input = "a" }
resource "terraform_data" "b" { input = "b" }
`

// TestManagedStateWithTheRealEngines plans and applies a layer without a
// backend through the http backend, on a new port each run (as after a
// restart), with the init cache: the state is in the store, the next plan
// has no changes, and neither the init cache nor the plan file holds the
// credential.
func TestManagedStateWithTheRealEngines(t *testing.T) {
	for _, e := range engines {
		t.Run(string(e.kind), func(t *testing.T) {
			bin := engineBin(t, e.kind, e.env)
			ctx := context.Background()
			st := storetest.Open(t, store.SQLite)
			dir := t.TempDir()
			key := store.StateKey{Repo: "acme/infra", Layer: "net"}
			job := int64(0)
			var passwords []string
			run := func(mode string, plan []byte) (*terraform.PlanResult, string) {
				job++
				base := backendServer(t, st) // a new port each time
				runID := liveRun(t, st, job, key.Repo, key.Layer)
				cred, err := tfstate.Issue(ctx, st, base, key, runID, mode)
				if err != nil {
					t.Fatal(err)
				}
				passwords = append(passwords, cred.Password)
				work := filepath.Join(dir, "work", string(rune('a'+job)))
				if err := os.MkdirAll(work, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(twoResources), 0o644); err != nil {
					t.Fatal(err)
				}
				var log bytes.Buffer
				setup := terraform.Setup{WorkDir: work, TerraformBin: bin, Kind: e.kind, Log: &log,
					PluginCacheDir: filepath.Join(dir, "plugins"), InitCacheDir: filepath.Join(dir, "init"), InitCacheScope: key.Repo,
					State: &terraform.HTTPState{Address: cred.Address, Username: cred.Username, Password: cred.Password}}
				defer func() {
					tfstate.Revoke(ctx, st, runID)
					st.ReleaseSlot(ctx, key.Repo, key.Layer, runID)
					st.FinishRun(ctx, runID, store.RunSucceeded, "success", "")
				}()
				if plan != nil {
					if _, err := terraform.Apply(ctx, terraform.ApplyInput{Setup: setup, PlanFile: plan}); err != nil {
						t.Fatalf("apply: %v\n%s", err, log.String())
					}
					return nil, log.String()
				}
				// As the plan job does: the slot is freed as soon as the plan
				// is made, before the plan is read as JSON.
				res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: setup, Planned: func(*terraform.PlanResult) error {
					return st.ReleaseSlot(ctx, key.Repo, key.Layer, runID)
				}})
				if err != nil {
					t.Fatalf("plan: %v\n%s", err, log.String())
				}
				if bytes.Contains(res.PlanFile, []byte(cred.Password)) {
					t.Error("the plan file holds the credential")
				}
				return res, log.String()
			}
			p1, _ := run(store.StateRead, nil)
			if p1.Add != 2 {
				t.Fatalf("first plan adds %d, want 2", p1.Add)
			}
			run(store.StateWrite, p1.PlanFile)
			content, v, err := st.CurrentState(ctx, key)
			if err != nil || v == nil || !strings.Contains(string(content), `"terraform_data"`) {
				t.Fatalf("state after apply: %+v %v\n%s", v, err, content)
			}
			p2, log := run(store.StateRead, nil)
			if p2.HasChanges {
				t.Fatalf("second plan has changes:\n%s", p2.Text)
			}
			if !strings.Contains(log, "init skipped") {
				t.Errorf("the second plan ran init again:\n%s", log)
			}
			// The init cache (what init wrote, kept for the next run) holds no credential.
			filepath.WalkDir(filepath.Join(dir, "init"), func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() || d.Type()&os.ModeSymlink != 0 {
					return err
				}
				b, err := os.ReadFile(path)
				if err == nil && (bytes.Contains(b, []byte("TF_HTTP")) || bytes.Contains(b, []byte("127.0.0.1"))) {
					t.Errorf("%s holds the backend's address:\n%s", path, b)
				}
				for _, p := range passwords {
					if bytes.Contains(b, []byte(p)) {
						t.Errorf("%s holds a run's credential", path)
					}
				}
				return nil
			})
			if list, _ := st.StateVersions(ctx, key, 0); len(list) != 1 {
				t.Errorf("%d versions, want 1 (the apply's)", len(list))
			}
			if l, _ := st.StateLockOf(ctx, key); l != nil {
				t.Errorf("the state lock stayed: %+v", l)
			}
		})
	}
}
