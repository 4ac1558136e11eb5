package container

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// wait bounds every wait on the containerized server: two engines plan and
// apply on a shared two-core machine.
const wait = 3 * time.Minute

// The image as the chart runs it (uid 10001, read-only root, /data and
// /tmp writable, no capability, no privilege escalation) serves a PR on
// the fake GitHub: /healthz answers, /readyz names the sandbox, and /plan
// then /apply of two layers, one per engine, each calling a module through
// a git:: source on a smart-HTTP git server and running a local-exec shell
// command, succeed. The command, run by the sandboxed engine, uses the
// image's shell and jq and cannot read the server's database, which the
// same user reads outside the sandbox (the positive control).
func TestImagePlansAndAppliesSandboxed(t *testing.T) {
	img := image(t)
	gitURL, fetches := gitServer(t, map[string]string{"hello/main.tf": helloModule})
	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	layer := func(engine string) string {
		return fmt.Sprintf("module \"hello\" {\n  source   = \"git::%s/modules.git//hello?ref=v1\"\n  greeting = %q\n}\n\noutput \"greeting\" {\n  value = module.hello.greeting\n}\n", gitURL, engine)
	}
	repo.Commit("main", map[string]string{
		".strata.yaml":            "version: 1\nlayers:\n  - dir: infra/terraform\n  - dir: infra/tofu\n    engine: tofu\n",
		"infra/terraform/main.tf": layer("terraform"),
		"infra/tofu/main.tf":      layer("tofu"),
	}, "Add layers")
	repo.Commit("hello", map[string]string{
		"infra/terraform/main.tf": layer("terraform, from the PR"),
		"infra/tofu/main.tf":      layer("tofu, from the PR"),
	}, "Greet from the PR")
	repo.SetPermission("alice", "write")
	pr := repo.OpenPR("hello", "main", "alice")
	head := pr.HeadSHA()

	srv := startContainer(t, img, gh)
	if got := httpGet(t, srv.url+"/healthz"); got != "ok" {
		t.Errorf("/healthz = %q", got)
	}
	// Sandboxed with every protection, as uid 10001 without capabilities:
	// what /readyz and the start log say.
	if ready := httpGet(t, srv.url+"/readyz"); !strings.Contains(ready, "\nsandbox: best_effort (landlock ABI ") || !strings.Contains(ready, "): every protection\n") {
		t.Errorf("/readyz = %q, want Terraform sandboxed by Landlock with every protection", ready)
	}
	if logs := srv.logs(t); !strings.Contains(logs, `"sandbox":"best_effort (landlock ABI `) || !strings.Contains(logs, `): every protection"`) {
		t.Errorf("the start log does not say Terraform runs sandboxed with every protection:\n%s", logs)
	}

	completed := func(name string) githubtest.CheckRun {
		var cr githubtest.CheckRun
		gh.WaitFor(t, wait, func() bool {
			var ok bool
			cr, ok = repo.CheckRun(head, name)
			return ok && cr.Status == "completed"
		})
		return cr
	}
	srv.deliver(repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
	engines := map[string]struct{ name, greeting string }{
		"infra/terraform": {"Terraform 1.5.7", "terraform, from the PR"},
		"infra/tofu":      {"OpenTofu 1.10.6", "tofu, from the PR"},
	}
	for dir, e := range engines {
		cr := completed("strata/plan: " + dir)
		if cr.Conclusion != "success" || cr.Title != "1 to add, 0 to change, 0 to destroy" || !strings.Contains(cr.Summary, "with "+e.name+".") {
			t.Fatalf("%s: plan %s %q, want success with %s:\n%s\n%s\n%s", dir, cr.Conclusion, cr.Title, e.name, cr.Summary, cr.Text, srv.logs(t))
		}
	}
	srv.deliver(repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
	for dir, e := range engines {
		cr := completed("strata/apply: " + dir)
		if cr.Conclusion != "success" || !strings.Contains(cr.Summary, "with "+e.name+".") {
			t.Fatalf("%s: apply %s %q, want success with %s:\n%s\n%s", dir, cr.Conclusion, cr.Title, e.name, cr.Summary, cr.Text)
		}
		for _, want := range []string{
			"(local-exec): greeting: " + e.greeting,
			"(local-exec): the server's database: refused",
			"Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
		} {
			if !strings.Contains(cr.Text, want) {
				t.Errorf("%s: the apply's output lacks %q:\n%s", dir, want, cr.Text)
			}
		}
		if strings.Contains(cr.Text, "(local-exec): the server's database: read") {
			t.Errorf("%s: the PR's code read the server's database:\n%s", dir, cr.Text)
		}
	}
	// Each engine's init cloned the module from the git server.
	if n := fetches.Load(); n < 2 {
		t.Errorf("the git server answered %d fetches of modules.git, want one per engine at least", n)
	}
	// The positive control: outside the sandbox the same user reads it.
	if out, err := podman("exec", srv.name, "sh", "-c", "head -c 16 /data/strata.db").CombinedOutput(); err != nil || string(out) != "SQLite format 3\x00" {
		t.Errorf("strata's user reads its database outside the sandbox: %q (%v)", out, err)
	}
	if out, err := podman("exec", srv.name, "id", "-u").Output(); err != nil || string(out) != "10001\n" {
		t.Errorf("the server runs as uid %q (%v), want 10001", out, err)
	}
	for _, v := range gh.Violations() {
		t.Errorf("GitHub API violation: %+v", v)
	}
}

// helloModule greets from a local-exec provisioner, with the tools the
// image promises (a POSIX shell, jq), and says whether it could read the
// server's database: in the sandbox it cannot.
const helloModule = `variable "greeting" {
  type = string
}

resource "terraform_data" "hello" {
  input = var.greeting
  provisioner "local-exec" {
    command     = <<-EOT
      echo "greeting: $(printf '{"greeting": "%s"}' "$GREETING" | jq -r .greeting)"
      if cat /data/strata.db >/dev/null 2>&1; then echo "the server's database: read"; else echo "the server's database: refused"; fi
    EOT
    environment = { GREETING = var.greeting }
  }
}

output "greeting" {
  value = terraform_data.hello.output
}
`

// gitServer serves a repository modules.git holding files, tagged v1,
// over git's smart HTTP protocol (git http-backend behind a CGI handler)
// on the host's loopback; it returns the URL its repositories are under,
// and a count of the fetches (upload-pack requests) it answered.
func gitServer(t *testing.T, files map[string]string) (string, *atomic.Int64) {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git: %v", err)
	}
	work, root := t.TempDir(), t.TempDir()
	for name, text := range files {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"-C", work, "init", "-q", "-b", "main"},
		{"-C", work, "add", "."},
		{"-C", work, "-c", "user.name=Strata", "-c", "user.email=strata@example.test", "commit", "-q", "-m", "modules"},
		{"-C", work, "tag", "v1"},
		{"clone", "-q", "--bare", work, filepath.Join(root, "modules.git")},
	} {
		if out, err := exec.Command(git, args...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	backend := &cgi.Handler{
		Path: git, Args: []string{"http-backend"}, Root: "/git",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"},
	}
	fetches := new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/git/modules.git/git-upload-pack" {
			fetches.Add(1)
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/git", fetches
}

// container is Strata's image running `strata serve` under Podman.
type container struct {
	t         *testing.T
	name, url string
}

// startContainer runs the image as the chart does, on the host's network
// so that it reaches the fake GitHub on loopback, with a data directory
// owned by the image's user (as the chart's fsGroup makes it), and waits
// until it is ready.
func startContainer(t *testing.T, img string, gh *githubtest.Server) *container {
	t.Helper()
	data := t.TempDir()
	chown := podman("unshare", "chown", "10001:10001", data) // rootless: uid 10001 of the user namespace
	if os.Geteuid() == 0 {
		chown = exec.Command("chown", "10001:10001", data)
	}
	if out, err := chown.CombinedOutput(); err != nil {
		t.Fatalf("the data dir for uid 10001: %v\n%s", err, out)
	}
	c := &container{t: t, name: randomName("strata-test-"), url: "http://" + freeAddr(t)}
	env := map[string]string{
		"STRATA_ADDR":                  strings.TrimPrefix(c.url, "http://"),
		"STRATA_METRICS_ADDR":          freeAddr(t), // the host's network: no fixed port
		"STRATA_STATE_ADDR":            freeAddr(t),
		"STRATA_PUBLIC_URL":            "https://strata.example.test",
		"STRATA_WORKERS":               "2",
		"STRATA_GITHUB_APP_ID":         fmt.Sprint(gh.AppID()),
		"STRATA_GITHUB_PRIVATE_KEY":    string(gh.PrivateKeyPEM()),
		"STRATA_GITHUB_WEBHOOK_SECRET": apptest.WebhookSecret,
		"STRATA_GITHUB_API_URL":        gh.APIURL(),
		"STRATA_GITHUB_GRAPHQL_URL":    gh.GraphQLURL(),
		"STRATA_GITHUB_WEB_URL":        gh.WebURL(),
	}
	args := []string{"run", "--detach", "--name", c.name, "--network", "host",
		"--read-only", "--read-only-tmpfs=false", "--tmpfs", "/tmp:rw,mode=1777,size=1g",
		"--cap-drop", "ALL", "--security-opt", "no-new-privileges", "--volume", data + ":/data"}
	args = append(args, ulimits...)
	cmdEnv := os.Environ()
	for k, v := range env {
		// By name: the values (the App's key) stay out of podman's arguments.
		args = append(args, "--env", k)
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	cmd := podman(append(args, img)...)
	cmd.Env = cmdEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("podman run: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the container's log:\n%s", c.logs(t))
		}
		_ = podman("rm", "--force", "--time", "5", c.name).Run()
	})
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := http.Get(c.url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return c
			}
		}
		if state, _ := podman("inspect", "--format", "{{.State.Status}}", c.name).Output(); strings.TrimSpace(string(state)) == "exited" {
			t.Fatalf("the container exited:\n%s", c.logs(t))
		}
		if time.Now().After(deadline) {
			t.Fatalf("strata serve in the container did not become ready:\n%s", c.logs(t))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// logs is what the server wrote so far.
func (c *container) logs(t *testing.T) string {
	out, err := podman("logs", c.name).CombinedOutput()
	if err != nil {
		return fmt.Sprintf("podman logs: %v\n%s", err, out)
	}
	return string(out)
}

func (c *container) deliver(payload githubtest.Payload, event string) {
	c.t.Helper()
	res := githubtest.Deliver(c.t, c.url+"/api/github/hook", apptest.WebhookSecret, event, apptest.NewDeliveryID(), payload)
	if res.StatusCode != http.StatusOK {
		c.t.Fatalf("webhook answered %d", res.StatusCode)
	}
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(bytes.TrimSpace(b))
}
