package terraform

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	version "github.com/hashicorp/go-version"
	"google.golang.org/protobuf/encoding/protowire"
)

// ErrNoPlanVersion is a saved plan whose version cannot be read: not the
// zip both engines write (an OpenTofu plan encrypted by the layer's
// encryption block), or a format this code does not know.
var ErrNoPlanVersion = errors.New("saved plan: no version found")

// PlanVersion is the version of the engine that made a saved plan, as the
// plan file records it: terraform_version, field 14 of the tfplan entry's
// Plan message in both Terraform's and OpenTofu's planfile.proto.
func PlanVersion(planFile []byte) (*version.Version, error) {
	zr, err := zip.NewReader(bytes.NewReader(planFile), int64(len(planFile)))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, err)
	}
	f, err := zr.Open("tfplan")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, err)
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, protowire.ParseError(n))
		}
		b = b[n:]
		if num == 14 && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, protowire.ParseError(n))
			}
			made, err := version.NewVersion(string(v))
			if err != nil {
				return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, err)
			}
			return made, nil
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", ErrNoPlanVersion, protowire.ParseError(n))
		}
		b = b[n:]
	}
	return nil, ErrNoPlanVersion
}

// PickForPlan decides which binary applies a saved plan: of the plan's
// engine, the one of the version that made it, since both engines refuse a
// plan made by another version. The server's binaries may have changed
// since the plan (a newer one added): the plan still applies.
func PickForPlan(bins []Binary, kind Kind, made *version.Version) (Binary, error) {
	have := "none"
	for _, b := range bins {
		if b.Kind != kind || b.Version == nil {
			continue
		}
		if b.Version.Equal(made) {
			return b, nil
		}
		if have == "none" {
			have = ""
		} else {
			have += ", "
		}
		have += fmt.Sprintf("%s (%s)", b.Version, b.Path)
	}
	return Binary{}, &VersionError{Message: fmt.Sprintf(
		"the plan was made by %s %s, which is no longer among the server's %s binaries: %s. Comment /plan to plan again.",
		kind.command(), made, kind, have)}
}

// ChooseForPlan picks the binary that applies planFile, made by an engine
// of kind: it asks the binaries of that kind their versions and reads the
// plan's. A plan whose version cannot be read gives ErrNoPlanVersion.
func ChooseForPlan(ctx context.Context, bins []Binary, kind Kind, planFile []byte) (Binary, error) {
	if kind == "" {
		kind = KindTerraform
	}
	made, err := PlanVersion(planFile)
	if err != nil {
		return Binary{}, err
	}
	var ofKind []Binary
	for _, b := range bins {
		if b.Kind != kind {
			continue
		}
		if b.Version, err = binaryVersion(ctx, b.Path); err != nil {
			return Binary{}, fmt.Errorf("%s binary %s: %w", b.Kind, b.Path, err)
		}
		ofKind = append(ofKind, b)
	}
	return PickForPlan(ofKind, kind, made)
}
