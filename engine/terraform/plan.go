package terraform

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-exec/tfexec"
	tfjson "github.com/hashicorp/terraform-json"
)

// PlanInput is one layer to plan.
type PlanInput struct {
	Setup
	// VarFiles are relative to WorkDir and must stay inside Root, symlinks
	// resolved.
	VarFiles []string
}

// PlanResult is a saved plan and what it would do.
type PlanResult struct {
	// PlanFile is the saved plan (`plan -out`), to be applied as is.
	PlanFile []byte
	// Text is the plan as `terraform show` prints it, without colour.
	// Terraform prints sensitive values as `(sensitive value)`.
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
}

// OutputChange is a root output whose value would change.
type OutputChange struct {
	Name      string
	Action    string // "add", "change" or "destroy"
	Sensitive bool
}

// Plan runs init, selects the workspace, and saves a plan (`plan -out`), then
// reads it back with `show -json` and `show`.
func Plan(ctx context.Context, in PlanInput) (*PlanResult, error) {
	varFiles, err := checkVarFiles(in.WorkDir, in.Root, in.VarFiles)
	if err != nil {
		return nil, err
	}
	s, err := newSession(ctx, in.Setup)
	if err != nil {
		return nil, err
	}
	if err := s.init(ctx); err != nil {
		return nil, err
	}
	if err := s.selectWorkspace(ctx); err != nil {
		return nil, err
	}

	tmp, err := os.MkdirTemp("", "strata-plan-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	planPath := filepath.Join(tmp, "tfplan")

	opts := []tfexec.PlanOption{tfexec.Out(planPath)}
	for _, vf := range varFiles {
		opts = append(opts, tfexec.VarFile(vf))
	}
	var hasChanges bool
	err = s.step("plan", func() (err error) {
		hasChanges, err = s.tf.Plan(ctx, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}

	plan, text, err := s.show(ctx, planPath)
	if err != nil {
		return nil, err
	}
	planFile, err := os.ReadFile(planPath)
	if err != nil {
		return nil, err
	}

	r := summarize(plan)
	r.PlanFile = planFile
	r.Text = text
	r.HasChanges = hasChanges
	r.TerraformVersion = s.version
	return r, nil
}

// show reads the saved plan as JSON and as text, at the same time: both only
// read the file, and on a large plan each takes a while. Neither goes to the
// log: the JSON holds sensitive values, and the plan's text is there already.
func (s *session) show(ctx context.Context, planPath string) (*tfjson.Plan, string, error) {
	s.tf.SetStdout(io.Discard)
	defer s.tf.SetStdout(s.log)
	fmt.Fprintf(s.log, "$ terraform show\n")
	s.stderr.Reset()

	var (
		wg            sync.WaitGroup
		plan          *tfjson.Plan
		text          string
		jsonErr, tErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		plan, jsonErr = s.tf.ShowPlanFile(ctx, planPath)
	}()
	go func() {
		defer wg.Done()
		text, tErr = s.tf.ShowPlanFileRaw(ctx, planPath)
	}()
	wg.Wait()
	for _, err := range []error{jsonErr, tErr} {
		if err != nil {
			return nil, "", &Error{Command: "show", Message: cleanMessage(s.stderr.String()), Err: err}
		}
	}
	return plan, text, nil
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
