// Package testprovider is a small Terraform provider for Strata's tests,
// written with terraform-plugin-framework: the `world` provider, at
// strata.test/strata/world (a made-up host, so it never collides with a
// registry and installs only from a filesystem mirror).
//
// Its one resource, world_thing, keeps its state in a directory outside
// Terraform, the "real world" (the provider's `dir`, or $WORLD_DIR): one
// JSON file per thing. A test changes a thing there behind Terraform's back
// and the next plan shows the drift, since Read returns what the file says.
// A thing can be told to be slow (apply_delay_ms), to fail on apply
// (fail_on_apply), and holds a sensitive attribute (secret). The world_gate
// data source holds a plan until the test opens the gate (gate.go); the
// world_exec data source runs a program at plan time, as hashicorp/external
// does (exec.go).
//
// The binary is cmd/terraform-provider-world; package providertest builds
// it and installs it for a test.
package testprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

const (
	// Address is the provider's source address.
	Address = "strata.test/strata/world"
	// Version is the version the mirror offers.
	Version = "0.1.0"
	// DirEnv is read when the provider block names no dir.
	DirEnv = "WORLD_DIR"
)

// Thing is a thing as the real world has it.
type Thing struct {
	Value  string `json:"value"`
	Secret string `json:"secret,omitempty"`
}

// thingName keeps a name a plain file name in the world dir.
var thingName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func thingPath(dir, name string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("the world has no directory: set the provider's dir, or $%s", DirEnv)
	}
	if !thingName.MatchString(name) {
		return "", fmt.Errorf("thing name %q: want letters, digits, _ and -", name)
	}
	return filepath.Join(dir, name+".json"), nil
}

// ReadThing reads a thing of the world in dir; ok is false when it does
// not exist.
func ReadThing(dir, name string) (th Thing, ok bool, err error) {
	p, err := thingPath(dir, name)
	if err != nil {
		return Thing{}, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Thing{}, false, nil
	}
	if err != nil {
		return Thing{}, false, err
	}
	if err := json.Unmarshal(b, &th); err != nil {
		return Thing{}, false, fmt.Errorf("thing %s: %w", name, err)
	}
	return th, true, nil
}

// WriteThing creates or replaces a thing of the world in dir. It writes a
// new file and renames it, so a reader never sees half a thing.
func WriteThing(dir, name string, th Thing) error {
	p, err := thingPath(dir, name)
	if err != nil {
		return err
	}
	b, err := json.Marshal(th)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+name+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// RemoveThing removes a thing of the world in dir; removing one that does
// not exist is not an error.
func RemoveThing(dir, name string) error {
	p, err := thingPath(dir, name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
