package hydrate

import (
	"errors"
	"fmt"
)

// ErrTimeout is a build that did not finish within Input.Timeout.
var ErrTimeout = errors.New("build timed out")

// ErrLimit is a build that would use more than a limit allows: a PR's
// kustomization must not make the server build, hold or commit without end.
var ErrLimit = errors.New("over a build limit")

// Limits bound what one build may use. A zero field takes its default.
type Limits struct {
	// Builds bounds the kustomizations a build builds, each base and
	// component counted as often as it is included: a diamond of bases N
	// levels deep builds 2^N of them.
	Builds int
	// Depth bounds how deep bases and components nest.
	Depth int
	// Objects bounds the resources a build outputs.
	Objects int
	// OutputBytes bounds the YAML of the resources a build outputs.
	OutputBytes int64
	// ReadBytes bounds what kustomize reads from the tree, each read counted.
	ReadBytes int64
	// MemoryBytes bounds the build process's heap (RLIMIT_DATA).
	MemoryBytes int64
}

// DefaultLimits is what a build may use when Input.Limits leaves a field
// zero: well above the largest real overlays (the 2,000-resource benchmark
// builds 2,001 objects, 1 MB, 4 kustomizations).
var DefaultLimits = Limits{
	Builds:      2000,
	Depth:       20,
	Objects:     20000,
	OutputBytes: 64 << 20,
	ReadBytes:   128 << 20,
	MemoryBytes: 2 << 30,
}

// orDefault fills the zero fields of l from DefaultLimits.
func (l Limits) orDefault() Limits {
	d := DefaultLimits
	if l.Builds > 0 {
		d.Builds = l.Builds
	}
	if l.Depth > 0 {
		d.Depth = l.Depth
	}
	if l.Objects > 0 {
		d.Objects = l.Objects
	}
	if l.OutputBytes > 0 {
		d.OutputBytes = l.OutputBytes
	}
	if l.ReadBytes > 0 {
		d.ReadBytes = l.ReadBytes
	}
	if l.MemoryBytes > 0 {
		d.MemoryBytes = l.MemoryBytes
	}
	return d
}

// shape is what building one kustomization costs: the kustomizations it
// builds (itself and each base or component, as often as included) and
// how deep they nest (1 without bases).
type shape struct {
	builds int
	depth  int
}

// withKids is the shape of a kustomization whose bases and components
// have the shapes kids.
func withKids(kids []shape) shape {
	s := shape{builds: 1, depth: 1}
	for _, k := range kids {
		s.builds = min(s.builds+k.builds, 1<<40) // a limit stops the build long before
		s.depth = max(s.depth, k.depth+1)
	}
	return s
}

// exceeds says which limit the kustomization file of shape s crosses, if any.
func (l Limits) exceeds(file string, s shape) error {
	switch {
	case s.builds > l.Builds:
		return fmt.Errorf("%s: %w: it builds %d kustomizations, counting each base and component as often as it is included (bases included many times over?); a build may build %d",
			file, ErrLimit, s.builds, l.Builds)
	case s.depth > l.Depth:
		return fmt.Errorf("%s: %w: its bases and components nest %d deep; a build may nest %d", file, ErrLimit, s.depth, l.Depth)
	}
	return nil
}
