package container

import (
	"encoding/json"
	"errors"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The image as an operator inspects it from outside: its user, labels and
// environment, the tools a layer's code calls, and the version.
func TestImageFromOutside(t *testing.T) {
	img := image(t)
	var inspect []struct {
		Config struct {
			User       string
			Env        []string
			Entrypoint []string
			Cmd        []string
			Labels     map[string]string
		}
	}
	if err := json.Unmarshal([]byte(run(t, "image", "inspect", img)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("podman image inspect: %v", err)
	}
	cfg := inspect[0].Config
	if cfg.User != "10001:10001" {
		t.Errorf("user = %q, want 10001:10001", cfg.User)
	}
	if !slices.Equal(cfg.Entrypoint, []string{"/usr/local/bin/strata"}) || !slices.Equal(cfg.Cmd, []string{"serve"}) {
		t.Errorf("entrypoint %q, cmd %q; want strata serve", cfg.Entrypoint, cfg.Cmd)
	}
	for _, want := range []string{"STRATA_DATA_DIR=/data", "HOME=/data", "TMPDIR=/tmp",
		"STRATA_TERRAFORM_BINARIES=terraform=/usr/local/bin/terraform:tofu=/usr/local/bin/tofu",
		"STRATA_TERRAFORM_SANDBOX=best_effort"} {
		if !slices.Contains(cfg.Env, want) {
			t.Errorf("env lacks %s: %q", want, cfg.Env)
		}
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.source":   "https://github.com/strata-dev/strata",
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.title":    "strata",
	} {
		if cfg.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, cfg.Labels[k], want)
		}
	}

	// `strata version` (the entrypoint's subcommand) names the version the
	// label carries, and how Terraform runs.
	version := run(t, "run", "--rm", "--network", "none", "--read-only", ulimits[0], ulimits[1], ulimits[2], ulimits[3], img, "version")
	label := cfg.Labels["org.opencontainers.image.version"]
	if label == "" || !strings.HasPrefix(version, "strata "+label+"\n") || !strings.Contains(version, "sandbox: ") {
		t.Errorf("strata version = %q, want \"strata %s\" and the sandbox", version, label)
	}
	// Terraform starts through the sandbox's launcher alone.
	if !strings.Contains(version, "sandbox launcher: /usr/local/bin/strata-sandbox\n") {
		t.Errorf("strata version = %q, want the launcher /usr/local/bin/strata-sandbox", version)
	}

	// The tools, where a layer's code finds them on PATH, and the engines'
	// pinned versions.
	script := `for c in sh git ssh jq curl terraform tofu strata; do command -v "$c"; done
terraform version | head -n 1; tofu version | head -n 1; id -u; id -g`
	got := run(t, append(append([]string{"run", "--rm", "--network", "none", "--read-only"}, ulimits...), "--entrypoint", "/bin/sh", img, "-c", script)...)
	want := "/usr/bin/sh\n/usr/bin/git\n/usr/bin/ssh\n/usr/bin/jq\n/usr/bin/curl\n" +
		"/usr/local/bin/terraform\n/usr/local/bin/tofu\n/usr/local/bin/strata\n" +
		"Terraform v1.5.7\nOpenTofu v1.10.6\n10001\n10001\n"
	if got != want {
		t.Errorf("tools in the image:\n%s\nwant:\n%s", got, want)
	}
}

// No layer of the image holds a key: nothing under a .strata directory and
// no *.key or *.pem file but the CA certificates Debian ships.
func TestImageHoldsNoKey(t *testing.T) {
	files := layerFiles(t, image(t))
	for _, f := range files {
		if secretPath(f) {
			t.Errorf("the image has %s in a layer", f)
		}
	}
	// Positive control: the listing is the image's files.
	if !slices.Contains(files, "usr/local/bin/strata") {
		t.Errorf("no usr/local/bin/strata among the image's %d files", len(files))
	}
}

// secretPath says whether a path in an image looks like a key that must
// not be there.
func secretPath(p string) bool {
	for _, ca := range []string{"etc/ssl/certs/", "usr/share/ca-certificates/", "usr/lib/ssl/cert.pem"} {
		if strings.HasPrefix(p, ca) {
			return false // public CA certificates
		}
	}
	for _, dir := range strings.Split(p, "/") {
		if dir == ".strata" || dir == ".git" {
			return true
		}
	}
	ext := path.Ext(p)
	return ext == ".key" || ext == ".pem"
}

func TestSecretPath(t *testing.T) {
	for p, want := range map[string]bool{
		".strata/github-app.json":                 true,
		"src/.strata/encryption.key":              true,
		"src/.git/config":                         true,
		"app.pem":                                 true,
		"data/tls.key":                            true,
		"etc/ssl/certs/ISRG_Root_X1.pem":          false,
		"usr/share/ca-certificates/mozilla/x.crt": false,
		"usr/lib/ssl/cert.pem":                    false,
		"usr/local/bin/strata":                    false,
		"usr/share/doc/git/copyright":             false,
	} {
		if got := secretPath(p); got != want {
			t.Errorf("secretPath(%q) = %v, want %v", p, got, want)
		}
	}
}

// The attack: a checkout where the quick start wrote the App's key and the
// encryption key into .strata/, with a *.pem and .git beside them, is the
// build context, and a Dockerfile copies the whole context into the image
// (what the old deploy/Dockerfile did: COPY . .). The repository's
// .dockerignore keeps every secret out of the context, so out of the image;
// the staged binary (dist/image/strata) goes in, the positive control.
func TestDockerignoreKeepsKeysOutOfTheImage(t *testing.T) {
	requirePodman(t)
	ctx := t.TempDir()
	ignore, err := os.ReadFile(filepath.Join(repoRoot(t), ".dockerignore"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	files := map[string]string{
		".dockerignore":             string(ignore),
		".strata/github-app.json":   `{"private_key":"-----BEGIN RSA PRIVATE KEY-----canary"}`,
		".strata/encryption.key":    "canary-encryption-key",
		"deploy/app.pem":            "-----BEGIN PRIVATE KEY-----canary",
		"tls.key":                   "canary",
		".git/config":               "[remote \"origin\"]\n\turl = https://token:canary@github.com/acme/strata\n",
		"bin/terraform":             "canary binary",
		"dist/image/.strata/x.json": "canary",
		"dist/image/strata":         "the staged binary",
	}
	for name, text := range files {
		p := filepath.Join(ctx, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	dockerfile := filepath.Join(t.TempDir(), "Dockerfile")
	if err := os.WriteFile(dockerfile, []byte("FROM scratch\nCOPY . /context/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	probe := "localhost/" + randomName("strata-context-probe-")
	run(t, "build", "--network", "none", "--pull=never", "-f", dockerfile, "-t", probe, ctx)
	t.Cleanup(func() { _ = podman("rmi", "--force", probe).Run() })

	var got []string
	for _, f := range layerFiles(t, probe) {
		if rest, ok := strings.CutPrefix(f, "context/"); ok && !strings.HasSuffix(f, "/") {
			got = append(got, rest)
		}
	}
	slices.Sort(got)
	if want := []string{"dist/image/strata"}; !slices.Equal(got, want) {
		t.Errorf("the image got %q of the context, want only %q", got, want)
	}
}

// The real build copies only what scripts/image staged: every COPY of
// deploy/Dockerfile takes its sources from dist/image/, the part of the
// context the probe above shows .dockerignore lets in.
func TestDockerfileCopiesOnlyTheStagedBinaries(t *testing.T) {
	text, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, line := range strings.Split(string(text), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 3 || !strings.EqualFold(fields[0], "COPY") && !strings.EqualFold(fields[0], "ADD") {
			continue
		}
		for _, f := range fields[1 : len(fields)-1] {
			if !strings.HasPrefix(f, "--") {
				sources = append(sources, f)
			}
		}
	}
	want := []string{"dist/image/terraform", "dist/image/tofu", "dist/image/strata", "dist/image/strata-sandbox"}
	if !slices.Equal(sources, want) {
		t.Errorf("deploy/Dockerfile copies %q, want %q", sources, want)
	}
}
