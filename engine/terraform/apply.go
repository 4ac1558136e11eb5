package terraform

import (
	"context"
	"io"
	"os"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// ApplyInput is a saved plan to apply, in a fresh tree at the commit it was
// planned from.
type ApplyInput struct {
	Setup
	// PlanFile is PlanResult.PlanFile, byte for byte.
	PlanFile []byte
	// Sensitive, when set, gets the values the saved plan marks sensitive
	// before the apply runs: a log that is stored as it is written masks
	// them from the apply's first line.
	Sensitive func(values []string)
}

// ApplyResult is what an apply printed.
type ApplyResult struct {
	// Text is the apply's output, its head when it is larger than its
	// check shows (textHead): the log has it whole.
	Text string
	// Sensitive holds the values the saved plan marks sensitive, as
	// PlanResult.Sensitive: what the apply prints (a provisioner, an
	// output) must be masked like the plan was.
	Sensitive        []string
	TerraformVersion string
	Engine           Kind
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

	// The saved plan goes to the session's scratch dir, where a sandboxed
	// Terraform may write and read it.
	defer s.close()
	planPath := s.scratch.file("tfplan")
	if err := os.WriteFile(planPath, in.PlanFile, 0o600); err != nil {
		return nil, err
	}

	// Read from the plan itself, so they are known whatever the apply does.
	plan, err := s.showJSON(ctx, planPath)
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Sensitive: append(plan.Sensitive, s.setup.State.secrets()...), TerraformVersion: s.version, Engine: s.setup.Kind}
	if in.Sensitive != nil {
		in.Sensitive(res.Sensitive)
	}

	out := &textHead{max: maxPlanText}
	s.tf.SetStdout(io.MultiWriter(s.log, out))
	err = s.step("apply", func() error { return s.tf.Apply(ctx, tfexec.DirOrPlan(planPath)) })
	res.Text = out.String()
	return res, err
}
