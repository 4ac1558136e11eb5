package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
)

func stateJSON(serial int, lineage, marker string) string {
	return fmt.Sprintf(`{"version":4,"terraform_version":"1.5.7","serial":%d,"lineage":%q,"outputs":{"m":{"value":%q,"type":"string"}},"resources":[],"check_results":null}`,
		serial, lineage, marker)
}

// stateServer is a real Strata server on the fake GitHub where olivia is
// an admin of acme/infra and wanda a writer; the CLI talks to it with the
// token of the user the test names.
func stateServer(t *testing.T) (*apptest.Env, string) {
	t.Helper()
	e := apptest.Start(t, apptest.Options{Local: true, Configure: stateOnAnyPort})
	e.Repo.SetPermission("olivia", "admin")
	e.Repo.SetPermission("wanda", "write")
	t.Setenv("GH_TOKEN", "")
	t.Setenv("STRATA_SERVER", "")
	return e, "http://" + e.Server.Addr()
}

// An admin moves a state in and out: a push makes a version recorded as a
// push by them, a pull gives it back byte for byte (to a 0600 file), a
// state of another lineage is refused until --force, and a workspace is
// its own state.
func TestStatePullPushRoundTrip(t *testing.T) {
	e, server := stateServer(t)
	t.Setenv("GITHUB_TOKEN", e.GitHub.UserToken("olivia"))
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at := []string{"--server", server, "--repo", "acme/infra"}

	code, tr := cli(t, "", append([]string{"state", "pull", "net"}, at...)...)
	if code != 1 || !strings.Contains(tr.err.String(), "Strata keeps no state for acme/infra net (HTTP 404)") {
		t.Fatalf("pull of a layer without state: %d, stderr %q", code, tr.err.String())
	}
	first := write("first.tfstate", stateJSON(3, "L1", "first"))
	code, tr = cli(t, "", append([]string{"state", "push", "net", first}, at...)...)
	if code != 0 || !strings.Contains(tr.out.String(), "pushed the state of acme/infra net: version 1, serial 3, lineage L1") {
		t.Fatalf("push: %d, stdout %q, stderr %q", code, tr.out.String(), tr.err.String())
	}
	out := filepath.Join(dir, "pulled.tfstate")
	code, tr = cli(t, "", append([]string{"state", "pull", "net", "--out", out}, at...)...)
	if code != 0 {
		t.Fatalf("pull: %d, stderr %q", code, tr.err.String())
	}
	if got, err := os.ReadFile(out); err != nil || string(got) != stateJSON(3, "L1", "first") {
		t.Errorf("pulled %q, %v; want what was pushed", got, err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the pulled file's mode: %v, %v; want 0600 (a state holds secrets)", fi.Mode(), err)
	}
	code, tr = cli(t, "", append([]string{"state", "pull", "net"}, at...)...)
	if code != 0 || tr.out.String() != stateJSON(3, "L1", "first") {
		t.Errorf("pull to stdout: %d, %q", code, tr.out.String())
	}

	other := write("other.tfstate", stateJSON(1, "L2", "other"))
	code, tr = cli(t, "", append([]string{"state", "push", "net", other}, at...)...)
	if code != 1 || !strings.Contains(tr.err.String(), "has lineage L1, this one L2: it is another state (push it with --force to replace it) (HTTP 409)") {
		t.Errorf("push of another lineage: %d, stderr %q; want refused, naming --force", code, tr.err.String())
	}
	older := write("older.tfstate", stateJSON(2, "L1", "older"))
	code, tr = cli(t, "", append([]string{"state", "push", "net", older}, at...)...)
	if code != 1 || !strings.Contains(tr.err.String(), "is at serial 3, this one is older (2)") {
		t.Errorf("push of an older serial: %d, stderr %q", code, tr.err.String())
	}
	code, tr = cli(t, "", append([]string{"state", "push", "net", other, "--force"}, at...)...)
	if code != 0 || !strings.Contains(tr.out.String(), "serial 1, lineage L2") {
		t.Errorf("push --force: %d, stdout %q, stderr %q", code, tr.out.String(), tr.err.String())
	}
	code, tr = cli(t, stateJSON(1, "P", "prod"), append([]string{"state", "push", "net", "-", "--workspace", "prod"}, at...)...)
	if code != 0 || !strings.Contains(tr.out.String(), "acme/infra net (workspace prod)") {
		t.Errorf("push from stdin to workspace prod: %d, stdout %q, stderr %q", code, tr.out.String(), tr.err.String())
	}

	st := e.Server.Store()
	vs, err := st.StateVersions(context.Background(), store.StateKey{Repo: "acme/infra", Layer: "net"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].Kind != store.StateByPush || vs[0].By != "olivia" || vs[0].Lineage != "L2" || vs[1].Lineage != "L1" {
		t.Errorf("versions of net: %d, newest %+v; want two pushes by olivia, L2 over L1", len(vs), vs[0])
	}
	if prod, _, _ := st.CurrentState(context.Background(), store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "prod"}); string(prod) != stateJSON(1, "P", "prod") {
		t.Errorf("workspace prod: %q", prod)
	}
}

// The attacks on the API: a writer's token, a token GitHub does not know,
// a user who cannot read the repository, and a push over Terraform's lock
// are refused, each with its reason, and change nothing.
func TestStateAPIRefusesAWriterAndAStranger(t *testing.T) {
	e, server := stateServer(t)
	st := e.Server.Store()
	key := store.StateKey{Repo: "acme/infra", Layer: "net"}
	if _, err := st.PutState(context.Background(), key, []byte(stateJSON(5, "L", "secret-output")), store.StateVersion{PR: 1}, false, 0); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "evil.tfstate")
	if err := os.WriteFile(file, []byte(stateJSON(9, "L", "evil")), 0o600); err != nil {
		t.Fatal(err)
	}
	at := []string{"--server", server, "--repo", "acme/infra"}
	e.GitHub.AddUser("mallory")
	for _, tc := range []struct {
		who, token, want string
	}{
		{"a writer", e.GitHub.UserToken("wanda"), "@wanda has write permission on this repository; `strata state %s` needs admin or higher. (HTTP 403)"},
		{"an unknown token", "ghu_not-a-token-github-issued", "GitHub does not know this token (expired or revoked?): log in again (gh auth login) or set a new GITHUB_TOKEN (HTTP 401)"},
		{"a user without access", e.GitHub.UserToken("mallory"), "acme/infra: not found, or @mallory cannot read it (HTTP 404)"},
	} {
		t.Setenv("GITHUB_TOKEN", tc.token)
		for _, op := range []string{"pull", "push"} {
			args := []string{"state", op, "net"}
			if op == "push" {
				args = append(args, file)
			}
			code, tr := cli(t, "", append(args, at...)...)
			want := strings.ReplaceAll(tc.want, "%s", op)
			if code != 1 || !strings.Contains(tr.err.String(), want) || strings.Contains(tr.out.String(), "secret-output") {
				t.Errorf("%s's %s: %d, stdout %q, stderr %q; want refused: %q", tc.who, op, code, tr.out.String(), tr.err.String(), want)
			}
		}
	}
	t.Setenv("GITHUB_TOKEN", e.GitHub.UserToken("olivia"))
	if _, ok, err := st.LockState(context.Background(), key, store.StateLock{ID: "held", RunID: 12, Info: []byte(`{"ID":"held"}`)}); err != nil || !ok {
		t.Fatalf("plant a lock: %v %v", ok, err)
	}
	code, tr := cli(t, "", append([]string{"state", "push", "net", file, "--force"}, at...)...)
	if code != 1 || !strings.Contains(tr.err.String(), "is locked by Terraform (lock held, run 12)") || !strings.Contains(tr.err.String(), "(HTTP 423)") {
		t.Errorf("an admin's push over Terraform's lock: %d, stderr %q; want refused (423)", code, tr.err.String())
	}
	content, v, err := st.CurrentState(context.Background(), key)
	if err != nil || v.Serial != 5 || !strings.Contains(string(content), "secret-output") {
		t.Errorf("after the refused requests the state is %s (serial %d), %v; want serial 5 unchanged", content, v.Serial, err)
	}
}

// Without a server or a repository the command line is wrong (exit 2),
// and a mistyped subcommand is suggested.
func TestStateCommandLine(t *testing.T) {
	t.Setenv("STRATA_SERVER", "")
	t.Setenv("GITHUB_TOKEN", "x")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"state", "pull", "net", "--repo", "acme/infra"}, "name the Strata server with --server URL or STRATA_SERVER"},
		{[]string{"state", "pull", "net", "--server", "ftp://x", "--repo", "acme/infra"}, `--server "ftp://x" is not an http(s) URL`},
		{[]string{"state", "push", "net", "--server", "http://x", "--repo", "acme/infra"}, "takes a LAYER and a FILE, got 1 arguments"},
		{[]string{"state", "pull", "net", "--server", "http://127.0.0.1:1", "--repo", "acme"}, `--repo "acme": want OWNER/NAME`},
		{[]string{"state", "pul", "net"}, `unknown command "pul" for "strata state" (did you mean "pull" or "push"?)`},
	} {
		code, tr := cli(t, "", tc.args...)
		if code != exitUsage || !strings.Contains(tr.err.String(), tc.want) {
			t.Errorf("strata %s: %d, stderr %q; want exit 2 saying %q", strings.Join(tc.args, " "), code, tr.err.String(), tc.want)
		}
	}
	for remote, want := range map[string]string{
		"https://github.com/acme/infra.git": "acme/infra",
		"git@github.com:acme/infra.git":     "acme/infra",
		"ssh://git@ghe.example.com/o/r":     "o/r",
		"https://github.com/acme/infra/":    "acme/infra",
		"/srv/git/infra":                    "",
	} {
		got := ""
		if m := githubRemote.FindStringSubmatch(remote); m != nil {
			got = m[1] + "/" + m[2]
		}
		if got != want {
			t.Errorf("remote %s: repository %q, want %q", remote, got, want)
		}
	}
}

// stateOnAnyPort gives the test server's loopback state backend a port of
// its own: test servers run side by side.
func stateOnAnyPort(c *config.Server) { c.State.Addr = "127.0.0.1:0" }
