package terraform

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// PlanInput is one layer to plan.
type PlanInput struct {
	Setup
	// VarFiles are relative to WorkDir and must stay inside Root, symlinks
	// resolved.
	VarFiles []string
	// KeepJSON, when set, is asked once, after `plan -out` (and Planned)
	// and before `show -json`: above 0, the plan's JSON is kept in
	// PlanResult.JSON if it weighs at most that many bytes; nil or a
	// result of 0 or less keeps none. It is asked that late so that the
	// caller can find out while Terraform plans whether anything will
	// read the JSON (a layer's policy sets): a large plan's JSON is tens
	// of MB held until the run ends.
	KeepJSON func() int64
	// Planned, when set, gets the result as soon as `plan -out` is done,
	// read from the plan's text (summarizeText). Its Sensitive holds the
	// values of the sensitive variables (sensitiveInputs): the text masks
	// all others but those passed through nonsensitive(), which only the
	// JSON has. A check can be written from it while Plan reads the saved
	// plan as JSON to complete the result it returns. An error from
	// Planned ends Plan with it.
	Planned func(*PlanResult) error
}

// PlanResult is a saved plan and what it would do.
type PlanResult struct {
	// PlanFile is the saved plan (`plan -out`), to be applied as is.
	PlanFile []byte
	// Text is the plan as Terraform prints it, without colour and without
	// the refresh progress lines: what `terraform show` prints for the saved
	// plan. Terraform prints sensitive values as `(sensitive value)`. A
	// text larger than its readers show is cut (maxPlanText), with a line
	// that says so: the run's log has it whole.
	Text string

	Add, Change, Destroy, Import int
	// Replaced and Destroyed are the addresses of resources that would be
	// replaced or destroyed without replacement: what a reviewer must not miss.
	Replaced, Destroyed []string
	// Changed is every resource address with a change, in plan order.
	Changed []string
	// HasChanges is Terraform's answer: resources or outputs would change.
	HasChanges bool
	Outputs    []OutputChange

	// Sensitive holds the values Terraform marks sensitive (in resources,
	// outputs and sensitive root variables), longest first, so that callers
	// can redact them from anything they store or show. Only non-empty
	// strings are collected.
	Sensitive []string

	TerraformVersion string
	Engine           Kind // which engine made the plan: its Name goes with the version

	// Changes are the plan's resource changes as two plans are compared
	// (planchanges.go); never stored or shown with the report: their
	// values may be sensitive.
	Changes []PlannedChange `json:"-"`

	// JSON is the plan as `show -json` prints it, when PlanInput.KeepJSON
	// asked for it and it fits (else JSONTooLarge): policies read it. It
	// holds sensitive values in clear, so it is never stored.
	JSON         []byte `json:"-"`
	JSONTooLarge bool   `json:"-"`
}

// OutputChange is a root output whose value would change.
type OutputChange struct {
	Name      string
	Action    string // "add", "change" or "destroy"
	Sensitive bool
}

// Plan runs init, selects the workspace, and saves a plan (`plan -out`), then
// reads it back with `show -json`. The text is plan's own output, which in
// automation is what `show` would print: a second `show` would cost as long
// as reading the JSON again (0.2 s for 2,000 resources).
func Plan(ctx context.Context, in PlanInput) (*PlanResult, error) {
	varFiles, err := checkVarFiles(in.WorkDir, in.Root, in.VarFiles)
	if err != nil {
		return nil, err
	}
	s, err := initSession(ctx, in.Setup)
	if err != nil {
		return nil, err
	}

	// The saved plan goes to the session's scratch dir, where a sandboxed
	// Terraform may write and read it.
	defer s.close()
	planPath := s.scratch.file("tfplan")

	opts := []tfexec.PlanOption{tfexec.Out(planPath)}
	for _, vf := range varFiles {
		opts = append(opts, tfexec.VarFile(vf))
	}
	var hasChanges bool
	out := newPlanOutput(maxPlanText)
	s.tf.SetStdout(io.MultiWriter(s.log, out))
	err = s.step("plan", func() (err error) {
		hasChanges, err = s.tf.Plan(ctx, opts...)
		return err
	})
	s.tf.SetStdout(s.log)
	if err != nil {
		return nil, err
	}
	text, early := out.result(hasChanges)
	planFile, err := os.ReadFile(planPath)
	if err != nil {
		return nil, err
	}
	if in.Planned != nil {
		early.PlanFile, early.Text = planFile, text
		early.TerraformVersion, early.Engine = s.version, s.setup.Kind
		early.Sensitive = append(sensitiveInputs(in.WorkDir, varFiles, in.Env), s.setup.State.secrets()...)
		if err := in.Planned(early); err != nil {
			return nil, err
		}
	}

	if in.KeepJSON != nil {
		if n := in.KeepJSON(); n > 0 {
			s.keepJSON = &jsonKeeper{max: n}
		}
	}
	r, err := s.showJSON(ctx, planPath)
	if err != nil {
		return nil, err
	}
	if s.keepJSON != nil {
		r.JSON, r.JSONTooLarge = s.keepJSON.result()
	}
	r.Sensitive = append(r.Sensitive, s.setup.State.secrets()...)
	r.PlanFile = planFile
	r.Text = text
	r.HasChanges = hasChanges
	r.TerraformVersion, r.Engine = s.version, s.setup.Kind
	return r, nil
}

// isProgress says whether a line is a progress line of the refresh before
// the plan, which `show` would not print.
func isProgress(line string) bool {
	for _, p := range []string{": Refreshing state...", ": Reading...", ": Read complete after", ": Still reading..."} {
		if strings.Contains(line, p) {
			return true
		}
	}
	return false
}

// checkVarFiles refuses var files that are absolute or that leave root, also
// through a symlink: a PR must not make Terraform read files of the server.
func checkVarFiles(workDir, root string, files []string) ([]string, error) {
	if len(files) == 0 {
		return nil, nil
	}
	if root == "" {
		root = workDir
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, fmt.Errorf("terraform: tree root: %w", err)
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		if filepath.IsAbs(f) {
			return nil, fmt.Errorf("terraform: var file %q: must be relative to the layer", f)
		}
		real, err := filepath.EvalSymlinks(filepath.Join(workDir, f))
		if err != nil {
			return nil, fmt.Errorf("terraform: var file %q: %w", f, err)
		}
		if !inside(realRoot, real) {
			return nil, fmt.Errorf("terraform: var file %q leaves the repository", f)
		}
		out = append(out, real)
	}
	return out, nil
}

func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
