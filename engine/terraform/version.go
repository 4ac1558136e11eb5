package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	version "github.com/hashicorp/go-version"
)

// Kind is the engine a binary is. Terraform and OpenTofu take the same
// commands and write the same plans and JSON, so one session runs either;
// a layer picks one with `engine:` in .strata.yaml.
type Kind string

const (
	KindTerraform Kind = "terraform"
	KindTofu      Kind = "tofu"
)

// TofuBinaryEnv names the OpenTofu binary the tests use, as BinaryEnv
// names Terraform's (scripts/test sets both).
const TofuBinaryEnv = "STRATA_TOFU_BIN"

// FindTofu returns $STRATA_TOFU_BIN, or `tofu` on PATH: the tests'
// OpenTofu, as FindBinary is their Terraform. The server runs the binaries
// of its config.
func FindTofu() (string, error) {
	if bin := os.Getenv(TofuBinaryEnv); bin != "" {
		return bin, nil
	}
	return exec.LookPath("tofu")
}

// command is the engine's command name, as the log shows it: `$ tofu init`.
func (k Kind) command() string {
	if k == "" {
		return string(KindTerraform)
	}
	return string(k)
}

// Name is the engine's name in reports: "Terraform" or "OpenTofu".
func (k Kind) Name() string {
	if k == KindTofu {
		return "OpenTofu"
	}
	return "Terraform"
}

// Binary is one of the operator's binaries, with its version once asked.
type Binary struct {
	Path    string
	Kind    Kind
	Version *version.Version
}

func (b Binary) String() string {
	if b.Version == nil {
		return fmt.Sprintf("%s (%s)", b.Kind.command(), b.Path)
	}
	return fmt.Sprintf("%s %s (%s)", b.Kind.command(), b.Version, b.Path)
}

// VersionError says that no binary of the operator's can run a layer: none
// of its engine, or none satisfying its required_version. The PR, or the
// server config, must change; running again would fail the same way.
type VersionError struct{ Message string }

func (e *VersionError) Error() string { return e.Message }

// Pick decides which binary runs a layer: of the binaries of the layer's
// kind, the highest version that satisfies every required_version
// constraint of the layer (Terraform checks them all, one per file). bins
// carry their versions (Choose asks them).
func Pick(bins []Binary, kind Kind, required []string) (Binary, error) {
	var ofKind []Binary
	for _, b := range bins {
		if b.Kind == kind && b.Version != nil {
			ofKind = append(ofKind, b)
		}
	}
	if len(ofKind) == 0 {
		other := KindTofu
		if kind == KindTofu {
			other = KindTerraform
		}
		return Binary{}, &VersionError{Message: fmt.Sprintf(
			"engine %s: the server has no %s binary. Add one to terraform.binaries in the server config (kind: %s), or set `engine: %s` on the layer.",
			kind, kind, kind, other)}
	}
	var constraints version.Constraints
	for _, r := range required {
		c, err := version.NewConstraint(r)
		if err != nil {
			return Binary{}, &VersionError{Message: fmt.Sprintf("required_version %q is not a version constraint: %v", r, err)}
		}
		constraints = append(constraints, c...)
	}
	sort.SliceStable(ofKind, func(i, j int) bool { return ofKind[i].Version.GreaterThan(ofKind[j].Version) })
	for _, b := range ofKind {
		if constraints.Check(b.Version) {
			return b, nil
		}
	}
	have := make([]string, len(ofKind))
	for i, b := range ofKind {
		have[i] = fmt.Sprintf("%s (%s)", b.Version, b.Path)
	}
	quoted := make([]string, len(required))
	for i, r := range required {
		quoted[i] = fmt.Sprintf("%q", r)
	}
	return Binary{}, &VersionError{Message: fmt.Sprintf(
		"required_version %s matches none of the %s binaries: %s. Add one to terraform.binaries in the server config.",
		strings.Join(quoted, " and "), kind, strings.Join(have, ", "))}
}

// Choose picks the binary that runs the layer in dir: it reads the layer's
// required_version, asks the binaries of its kind their versions, and
// Picks. A layer that does not parse is left to init to report; its
// constraints, if any were read, still count.
func Choose(ctx context.Context, bins []Binary, kind Kind, dir string) (Binary, error) {
	if kind == "" {
		kind = KindTerraform
	}
	var ofKind []Binary
	for _, b := range bins {
		if b.Kind != kind {
			continue
		}
		v, err := binaryVersion(ctx, b.Path)
		if err != nil {
			return Binary{}, fmt.Errorf("%s binary %s: %w", b.Kind, b.Path, err)
		}
		b.Version = v
		ofKind = append(ofKind, b)
	}
	mod, _ := loadModule(dir)
	var required []string
	if mod != nil {
		required = mod.RequiredCore
	}
	return Pick(ofKind, kind, required)
}

// versions caches each binary's version by path; an entry holds while the
// file's size and modification time do, so a binary replaced in place is
// asked again.
var versions = struct {
	sync.Mutex
	byPath map[string]cachedVersion
}{byPath: map[string]cachedVersion{}}

type cachedVersion struct {
	size    int64
	modTime time.Time
	version *version.Version
}

// binaryVersion asks the binary `version -json`, once per file.
func binaryVersion(ctx context.Context, path string) (*version.Version, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	versions.Lock()
	c, ok := versions.byPath[path]
	versions.Unlock()
	if ok && c.size == fi.Size() && c.modTime.Equal(fi.ModTime()) {
		return c.version, nil
	}
	v, err := askVersion(ctx, path)
	if err != nil {
		return nil, err
	}
	versions.Lock()
	versions.byPath[path] = cachedVersion{size: fi.Size(), modTime: fi.ModTime(), version: v}
	versions.Unlock()
	return v, nil
}

// askVersion runs `version -json` in an empty directory (it would report
// the provider selections of the one it runs in), without the update check
// that calls HashiCorp.
func askVersion(ctx context.Context, path string) (*version.Version, error) {
	dir, err := os.MkdirTemp("", "strata-version-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "-json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("version -json: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	// OpenTofu answers with the same key as Terraform.
	var answer struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &answer); err != nil || answer.Version == "" {
		return nil, fmt.Errorf("version -json gave no version: %q", strings.TrimSpace(string(out)))
	}
	return version.NewVersion(answer.Version)
}
