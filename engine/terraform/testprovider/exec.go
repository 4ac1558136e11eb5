package testprovider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// MaxExecOutput bounds what world_exec keeps of a program's stdout: a
// program that prints more fails the read.
const MaxExecOutput = 1 << 20

// execSource is the world_exec data source: reading it runs a program, as
// hashicorp/external does, so a PR's code runs while Terraform plans (the
// attack tests of package tfstate). The program inherits the provider's
// environment, which is Terraform's: whatever Terraform was given (the
// http backend's TF_HTTP_* among it) the program sees too.
type execSource struct{}

type execModel struct {
	Program  types.List   `tfsdk:"program"`
	Env      types.Map    `tfsdk:"env"`
	Stdout   types.String `tfsdk:"stdout"`
	Stderr   types.String `tfsdk:"stderr"`
	ExitCode types.Int64  `tfsdk:"exit_code"`
}

func newExec() datasource.DataSource { return &execSource{} }

func (e *execSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_exec"
}

func (e *execSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Description: "Runs a program when read (at plan time), with the provider's environment and env added, from the layer's directory.",
		Attributes: map[string]schema.Attribute{
			"program":   schema.ListAttribute{ElementType: types.StringType, Required: true},
			"env":       schema.MapAttribute{ElementType: types.StringType, Optional: true},
			"stdout":    schema.StringAttribute{Computed: true},
			"stderr":    schema.StringAttribute{Computed: true},
			"exit_code": schema.Int64Attribute{Computed: true},
		},
	}
}

func (e *execSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m execModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var program []string
	resp.Diagnostics.Append(m.Program.ElementsAs(ctx, &program, false)...)
	env := map[string]string{}
	if !m.Env.IsNull() {
		resp.Diagnostics.Append(m.Env.ElementsAs(ctx, &env, false)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	res, err := RunProgram(ctx, program, env)
	if err != nil {
		resp.Diagnostics.AddError("world_exec", err.Error())
		return
	}
	m.Stdout, m.Stderr, m.ExitCode = types.StringValue(res.Stdout), types.StringValue(res.Stderr), types.Int64Value(int64(res.ExitCode))
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// Ran is what a program did: its output and exit code.
type Ran struct {
	Stdout, Stderr string
	ExitCode       int
}

// RunProgram runs program with this process's environment and env added,
// and returns its stdout and stderr, each at most MaxExecOutput bytes, and
// its exit code. A program that exits non-zero is no error (the test reads
// the code); one that does not start, or prints too much, is.
func RunProgram(ctx context.Context, program []string, env map[string]string) (Ran, error) {
	if len(program) == 0 || program[0] == "" {
		return Ran{}, errors.New("program is empty")
	}
	cmd := exec.CommandContext(ctx, program[0], program[1:]...)
	cmd.Env = os.Environ()
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stdout, stderr := &boundedBuffer{max: MaxExecOutput}, &boundedBuffer{max: MaxExecOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	if stdout.over || stderr.over {
		return Ran{}, fmt.Errorf("%s printed more than %d bytes", program[0], MaxExecOutput)
	}
	ran := Ran{Stdout: stdout.b.String(), Stderr: stderr.b.String()}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		ran.ExitCode = exit.ExitCode()
		return ran, nil
	}
	return ran, err
}

// boundedBuffer keeps up to max bytes and notes that more came.
type boundedBuffer struct {
	b    bytes.Buffer
	max  int
	over bool
}

func (w *boundedBuffer) Write(p []byte) (int, error) {
	if room := w.max - w.b.Len(); len(p) > room {
		w.b.Write(p[:max(room, 0)])
		w.over = true
		return len(p), nil
	}
	return w.b.Write(p)
}
