package terraform

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// ApplyInput is a saved plan to apply, in a fresh tree at the commit it was
// planned from.
type ApplyInput struct {
	Setup
	// PlanFile is PlanResult.PlanFile, byte for byte.
	PlanFile []byte
}

// ApplyResult is what an apply printed.
type ApplyResult struct {
	Text             string
	TerraformVersion string
}

// Apply runs init, selects the workspace and applies exactly the saved plan:
// no new plan is made, so what was reviewed is what changes. A plan whose
// state has changed since fails with Terraform's "Saved plan is stale".
// When the apply command itself fails, the result still holds what it printed
// (a partial apply changed something), next to the *Error.
func Apply(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	s, err := initSession(ctx, in.Setup)
	if err != nil {
		return nil, err
	}

	tmp, err := os.MkdirTemp("", "strata-apply-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	planPath := filepath.Join(tmp, "tfplan")
	if err := os.WriteFile(planPath, in.PlanFile, 0o600); err != nil {
		return nil, err
	}

	var out strings.Builder
	s.tf.SetStdout(io.MultiWriter(s.log, &out))
	err = s.step("apply", func() error { return s.tf.Apply(ctx, tfexec.DirOrPlan(planPath)) })
	return &ApplyResult{Text: out.String(), TerraformVersion: s.version}, err
}
