package container

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/tooltest"
)

// imageEnv names the image under test, built by scripts/image.
const imageEnv = "STRATA_IMAGE"

// podmanGlobal are the flags every podman call takes: runc and cgroupfs
// work on hosts with a hybrid cgroup layout, which crun refuses.
var podmanGlobal = []string{"--runtime", "runc", "--cgroup-manager", "cgroupfs"}

// ulimits are explicit: the host's hard open-files limit is 20,000, and
// with Podman's default process limit (or 65,536) runc fails to start the
// image's non-root user ("error setting rlimit type 6").
var ulimits = []string{"--ulimit", "nofile=20000:20000", "--ulimit", "nproc=20000:20000"}

func podman(args ...string) *exec.Cmd {
	return exec.Command("podman", append(append([]string{}, podmanGlobal...), args...)...)
}

// run runs podman and returns its standard output; it fails the test on
// an error, with what podman wrote.
func run(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := podman(args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// image is the image under test: it fails when tools are required
// (scripts/test, CI) and podman or the image is missing, and skips
// otherwise.
func image(t *testing.T) string {
	t.Helper()
	requirePodman(t)
	name := os.Getenv(imageEnv)
	if name == "" {
		tooltest.Missing(t, "Strata's image", errors.New(imageEnv+" is not set: build it with scripts/image"))
	}
	if out, err := podman("image", "exists", name).CombinedOutput(); err != nil {
		tooltest.Missing(t, "Strata's image "+name, errors.New("podman has no such image: build it with scripts/image "+string(out)))
	}
	return name
}

// requirePodman fails or skips the test, as image does, without podman.
func requirePodman(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		tooltest.Missing(t, "podman", err)
	}
}

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func randomName(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// layerFiles lists every path in every layer of image, as the image's
// archive holds them (`podman image save`): what anyone who pulls the
// image can read, including files a later layer deletes.
func layerFiles(t *testing.T, image string) []string {
	t.Helper()
	archive := filepath.Join(t.TempDir(), "image.tar")
	run(t, "image", "save", "--format", "docker-archive", "-o", archive, image)
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []string
	outer := tar.NewReader(f)
	for {
		h, err := outer.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", archive, err)
		}
		if !strings.HasSuffix(h.Name, ".tar") && !strings.HasSuffix(h.Name, ".tar.gz") {
			continue // manifest.json, the config
		}
		names, err := tarNames(outer)
		if err != nil {
			t.Fatalf("layer %s: %v", h.Name, err)
		}
		files = append(files, names...)
	}
	if len(files) == 0 {
		t.Fatalf("no layer in the archive of %s", image)
	}
	return files
}

// tarNames lists the entries of a layer, plain or gzipped.
func tarNames(r io.Reader) ([]string, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		return tarNames(gz)
	}
	var names []string
	tr := tar.NewReader(br)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names, nil
		}
		if err != nil {
			return names, err
		}
		names = append(names, strings.TrimPrefix(h.Name, "./"))
	}
}
