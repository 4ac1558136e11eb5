// Package providertest installs the test provider (package testprovider)
// for a test, as an operator who mirrors providers would: the binary in a
// filesystem mirror, and a Terraform CLI config that installs
// strata.test/* from that mirror only.
//
//	p := providertest.Install(t)      // builds the provider once per test process
//	                                  // (InstallPacked: the mirror holds a zip)
//	p.CLIConfig                       // TF_CLI_CONFIG_FILE, or Strata's terraform.cli_config
//	p.Mirror                          // the mirror directory the CLI config names
//	w := providertest.NewWorld(t)     // an empty real world in a temp dir
//	main := providertest.Layer(w.Dir, providertest.Thing{Name: "a", Value: "1"})
//	w.Set(t, "a", "2")                // change the real world behind Terraform's back
//	v, ok := w.Get(t, "a")            // what the real world holds now
//
// Install builds with `go build` (the Go build cache makes a warm build
// quick) and fails the test, never skips it, when it cannot.
package providertest

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"strata.dev/strata/engine/terraform/testprovider"
)

// Source is the address a layer's required_providers gives the provider.
const Source = testprovider.Address

// Installed is the provider installed for a test.
type Installed struct {
	// CLIConfig is a Terraform CLI config file whose provider_installation
	// takes strata.test/*/* from Mirror and nothing else from it.
	CLIConfig string
	// Mirror is a filesystem mirror in the unpacked layout:
	// Mirror/strata.test/strata/world/0.1.0/linux_amd64/terraform-provider-world_v0.1.0.
	Mirror string
	// Binary is the provider built for this test process.
	Binary string
}

var build struct {
	once sync.Once
	bin  string
	err  error
}

// Binary builds the provider, once per test process, and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "strata-provider-world-")
		if err != nil {
			build.err = err
			return
		}
		bin := filepath.Join(dir, "terraform-provider-world")
		cmd := exec.Command("go", "build", "-o", bin, "strata.dev/strata/engine/terraform/testprovider/cmd/terraform-provider-world")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			build.err = fmt.Errorf("go build of the test provider: %v\n%s", err, out.String())
			return
		}
		build.bin = bin
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// Install lays the provider out in a filesystem mirror in a temp dir of
// t, unpacked, with a CLI config naming it. Terraform links an unpacked
// mirror's directory into the plugin cache; it copies nothing.
func Install(t testing.TB) Installed { return install(t, false) }

// InstallPacked is Install with the mirror in the packed layout, a zip as
// a registry or a network mirror serves it
// (Mirror/strata.test/strata/world/terraform-provider-world_0.1.0_linux_amd64.zip):
// Terraform unpacks it into the plugin cache, as it does a provider it
// downloads. Binary is the zip.
func InstallPacked(t testing.TB) Installed { return install(t, true) }

func install(t testing.TB, packed bool) Installed {
	t.Helper()
	bin := Binary(t)
	root := t.TempDir()
	mirror := filepath.Join(root, "mirror")
	platform := runtime.GOOS + "_" + runtime.GOARCH
	dir := filepath.Join(mirror, filepath.FromSlash(Source), testprovider.Version, platform)
	if packed {
		dir = filepath.Join(mirror, filepath.FromSlash(Source))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := "terraform-provider-world_v" + testprovider.Version
	dst := filepath.Join(dir, exe)
	var err error
	if packed {
		dst = filepath.Join(dir, "terraform-provider-world_"+testprovider.Version+"_"+platform+".zip")
		err = zipFile(bin, exe, dst)
	} else {
		err = linkOrCopy(bin, dst)
	}
	if err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(root, "terraform.rc")
	if err := os.WriteFile(cli, []byte(CLIConfig(mirror)), 0o644); err != nil {
		t.Fatal(err)
	}
	return Installed{CLIConfig: cli, Mirror: mirror, Binary: dst}
}

// CLIConfig is a Terraform CLI config that installs strata.test/*/* from
// the mirror and every other provider as usual.
func CLIConfig(mirror string) string {
	return fmt.Sprintf(`provider_installation {
  filesystem_mirror {
    path    = %s
    include = ["strata.test/*/*"]
  }
  direct {
    exclude = ["strata.test/*/*"]
  }
}
`, strconv.Quote(mirror))
}

// zipFile writes a zip holding src as name, executable.
func zipFile(src, name, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	h := &zip.FileHeader{Name: name, Method: zip.Deflate}
	h.SetMode(0o755)
	w, err := zw.CreateHeader(h)
	if err == nil {
		_, err = w.Write(b)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o755)
}

// Thing is a world_thing of a layer. Name is also its resource name.
type Thing struct {
	Name, Value string
	// Secret is the sensitive attribute; empty leaves it unset.
	Secret string
	// ApplyDelayMS makes creating, updating and deleting it slow.
	ApplyDelayMS int
	// FailOnApply makes creating or updating it fail.
	FailOnApply bool
}

// Layer is a main.tf using the provider, whose real world is dir, with the
// things. Its state stays in the layer's directory: for Strata's runs,
// whose work dirs do not outlive them, use LayerWithState.
func Layer(dir string, things ...Thing) string { return LayerWithState(dir, "", things...) }

// LayerWithState is Layer with a local backend keeping the state at
// state, when not empty.
func LayerWithState(dir, state string, things ...Thing) string {
	var b strings.Builder
	b.WriteString("terraform {\n")
	if state != "" {
		// Other workspaces' states go next to it, not into the work dir.
		workspaces := filepath.Join(filepath.Dir(state), "terraform.tfstate.d")
		fmt.Fprintf(&b, "  backend \"local\" {\n    path          = %s\n    workspace_dir = %s\n  }\n", strconv.Quote(state), strconv.Quote(workspaces))
	}
	fmt.Fprintf(&b, "  required_providers {\n    world = {\n      source  = %q\n      version = %q\n    }\n  }\n}\n\n", Source, testprovider.Version)
	fmt.Fprintf(&b, "provider \"world\" {\n  dir = %s\n}\n", strconv.Quote(dir))
	for _, th := range things {
		fmt.Fprintf(&b, "\nresource \"world_thing\" %q {\n  name  = %q\n  value = %q\n", th.Name, th.Name, th.Value)
		if th.Secret != "" {
			fmt.Fprintf(&b, "  secret = %q\n", th.Secret)
		}
		if th.ApplyDelayMS > 0 {
			fmt.Fprintf(&b, "  apply_delay_ms = %d\n", th.ApplyDelayMS)
		}
		if th.FailOnApply {
			b.WriteString("  fail_on_apply = true\n")
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// World is the provider's real world: the directory its things live in.
type World struct{ Dir string }

// NewWorld is an empty world in a temp dir of t.
func NewWorld(t testing.TB) World { return World{Dir: t.TempDir()} }

// Get is a thing's value in the real world; ok is false when it does not
// exist. A world that cannot be read fails the test.
func (w World) Get(t testing.TB, name string) (value string, ok bool) {
	t.Helper()
	th, ok, err := testprovider.ReadThing(w.Dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return th.Value, ok
}

// Set changes (or creates) a thing's value in the real world, keeping its
// secret: the drift the next plan shows.
func (w World) Set(t testing.TB, name, value string) {
	t.Helper()
	th, _, err := testprovider.ReadThing(w.Dir, name)
	if err == nil {
		th.Value = value
		err = testprovider.WriteThing(w.Dir, name, th)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Remove deletes a thing from the real world.
func (w World) Remove(t testing.TB, name string) {
	t.Helper()
	if err := testprovider.RemoveThing(w.Dir, name); err != nil {
		t.Fatal(err)
	}
}

// Names lists the things the real world holds.
func (w World) Names(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(w.Dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".json"))
	}
	sort.Strings(names)
	return names
}

// Gate is a world_gate data source for a layer's main.tf: a plan of the
// layer waits while reading it, after Terraform printed its first lines,
// until OpenGate.
func Gate(name string) string {
	return fmt.Sprintf("\ndata \"world_gate\" %q {\n  name = %q\n}\n", name, name)
}

// OpenGate lets the plans waiting on the gate go on.
func (w World) OpenGate(t testing.TB, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(w.Dir, name+testprovider.GateSuffix), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}
