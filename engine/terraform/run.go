package terraform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/terraform-config-inspect/tfconfig"
	"github.com/hashicorp/terraform-exec/tfexec"
	"strata.dev/strata/engine/childproc"
	"strata.dev/strata/words"
)

// BinaryEnv names the environment variable that selects the Terraform binary.
const BinaryEnv = "STRATA_TERRAFORM_BIN"

// FindBinary returns $STRATA_TERRAFORM_BIN, or `terraform` on PATH.
func FindBinary() (string, error) {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin, nil
	}
	return exec.LookPath("terraform")
}

// Setup says where and how Terraform runs; Plan and Apply share it.
type Setup struct {
	// WorkDir is the layer's directory, absolute, inside an extracted tree.
	WorkDir string
	// Root is the root of that tree: var files must stay inside it.
	// Empty means WorkDir.
	Root string
	// Workspace is selected, or created, before planning; "" is "default".
	Workspace string
	// TerraformBin is the binary to run; empty means FindBinary.
	TerraformBin string
	// Kind is TerraformBin's engine, for the log and reports; empty means
	// terraform.
	Kind Kind
	// PluginCacheDir is Terraform's provider cache, shared by every run on the
	// host (TF_PLUGIN_CACHE_DIR). Terraform does not make concurrent writes to
	// it safe, so inits sharing it are serialized by an flock on
	// PluginCacheDir/.strata-init.lock: across goroutines, processes and
	// replicas on one host. Only init is serialized; plans run in parallel.
	// Empty disables the cache.
	PluginCacheDir string
	// CLIConfigFile is the Terraform CLI config every command reads
	// (TF_CLI_CONFIG_FILE; the server config's terraform.cli_config), e.g.
	// a provider_installation that takes providers from a mirror. The
	// sandbox opens it read-only, with the directories it installs
	// providers from (CLIConfigPaths). Empty means none: HOME is the run's
	// scratch dir, so Terraform reads no ~/.terraformrc either.
	CLIConfigFile string
	// InitCacheDir keeps what init wrote into layers, to copy back instead
	// of running init again when nothing init reads has changed
	// (initcache.go); InitCacheScope (the repository) keeps one
	// repository's from another's. Either empty disables it.
	InitCacheDir, InitCacheScope string
	// Env is what Terraform gets of the operator's variables, besides what
	// it needs to run (environment, in env.go): nothing else of the
	// server's environment reaches it. Variables that terraform-exec
	// manages itself (TF_LOG*, TF_INPUT, TF_CLI_ARGS*, TF_WORKSPACE, ...)
	// are refused; TF_VAR_* need a Sandbox, whose launcher passes them.
	Env map[string]string
	// State, when set, keeps the layer's state in that http backend (the
	// override file goes into WorkDir, the credential into the
	// environment only: state.go); nil leaves the layer's own backend.
	State *HTTPState
	// Sandbox confines Terraform to the run's files (sandbox.go); nil runs
	// the binary directly, as `strata run` does on an operator's checkout.
	Sandbox *Sandbox
	// Log receives the commands' output as it happens; nil discards it.
	Log io.Writer
	// StopGrace is how long Terraform has, once the context is cancelled,
	// between its interrupt (SIGINT: it stops and releases the state lock)
	// and a kill. Zero means DefaultStopGrace.
	StopGrace time.Duration
}

// DefaultStopGrace is Terraform's time to stop after an interrupt when the
// Setup names none.
const DefaultStopGrace = 10 * time.Second

const cacheLockName = ".strata-init.lock"

// session runs the commands of one plan or apply in one working directory.
type session struct {
	setup   Setup
	tf      *tfexec.Terraform
	log     io.Writer
	stderr  lockedBuffer // the current command's stderr, for Error.Message
	version string       // of the binary
	bin     string       // the binary, whatever runs it (the sandbox's launcher)
	// launch is how its commands run: their environments, the sandbox's
	// report and user (command, in sandbox.go).
	launch
	scratch scratch // HOME, TMPDIR and the saved plan; removed by close
	// keepJSON, when set, keeps the plan's JSON as show -json prints it:
	// PlanInput.KeepJSON, asked before show -json, said how much.
	keepJSON *jsonKeeper
}

// newSession checks the setup and reads the binary's version, for the log
// and the init cache's key.
func newSession(ctx context.Context, s Setup) (_ *session, err error) {
	if !filepath.IsAbs(s.WorkDir) {
		return nil, fmt.Errorf("terraform: work dir %q is not absolute", s.WorkDir)
	}
	bin := s.TerraformBin
	if bin == "" {
		if bin, err = FindBinary(); err != nil {
			return nil, fmt.Errorf("terraform: no binary: %w", err)
		}
	}
	sc, err := newScratch()
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			sc.remove()
		}
	}()
	l, err := command(s, bin, sc)
	if err != nil {
		return nil, err
	}
	tf, err := tfexec.NewTerraform(s.WorkDir, l.exe)
	if err != nil {
		return nil, fmt.Errorf("terraform: %w", err)
	}
	if err := tf.SetEnv(l.env); err != nil {
		return nil, fmt.Errorf("terraform: env: %w", err)
	}
	// terraform-exec interrupts Terraform when ctx ends; without a wait
	// delay it would never kill one that does not stop.
	if err := tf.SetWaitDelay(s.waitDelay()); err != nil {
		return nil, fmt.Errorf("terraform: %w", err)
	}
	ss := &session{setup: s, tf: tf, log: s.Log, scratch: sc, launch: l, bin: bin}
	if ss.log == nil {
		ss.log = io.Discard
	}
	if l.report != nil {
		// First in the log: what this run lacks of the sandbox, if anything.
		fmt.Fprint(ss.log, l.report.RunLog())
	}
	// The binary's version, asked once per file, not once per run
	// (binaryVersion): `version` is a Terraform process of its own, 0.1 to
	// 0.3 s before every plan, more than the rest of Strata's own work on
	// it. terraform-exec asks it itself only before init (tfexecVersion).
	v, err := binaryVersion(ctx, bin)
	if err != nil {
		return nil, &Error{Command: "version", Message: err.Error(), Err: err, Kind: s.Kind}
	}
	ss.version = v.String()
	fmt.Fprintf(ss.log, "[strata] %s %s (%s)\n", s.Kind.command(), ss.version, bin)
	tf.SetStdout(ss.log)
	tf.SetStderr(io.MultiWriter(ss.log, &ss.stderr))
	return ss, nil
}

// initSession opens a session, runs init and selects the workspace: how
// both plan and apply start.
func initSession(ctx context.Context, setup Setup) (*session, error) {
	s, err := newSession(ctx, setup)
	if err != nil {
		return nil, err
	}
	if err := s.useState(); err != nil {
		s.close()
		return nil, err
	}
	if err := s.init(ctx); err != nil {
		s.close()
		return nil, err
	}
	if err := s.selectWorkspace(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// close removes the session's scratch dir.
func (s *session) close() { s.scratch.remove() }

// step runs one Terraform command, announcing it in the log and turning a
// failure into an *Error with Terraform's message.
func (s *session) step(command string, run func() error) error {
	name := s.setup.Kind.command()
	fmt.Fprintf(s.log, "$ %s %s\n", name, command)
	s.stderr.Reset()
	if err := s.handOver(); err != nil {
		return err
	}
	start := time.Now()
	err := run()
	fmt.Fprintf(s.log, "[strata] %s %s took %s\n", name, command, words.Duration(time.Since(start)))
	if err == nil {
		return nil
	}
	return &Error{Command: command, Message: cleanMessage(s.stderr.String()), Err: err, Kind: s.setup.Kind}
}

// init runs `terraform init`, holding the plugin cache lock when there is a
// cache and the layer may install providers into it. A layer that only uses
// Terraform's built-in provider installs none, and its init does not wait
// for the inits of other layers (12 layers planned at once spent most of
// their time queued for this lock).
func (s *session) init(ctx context.Context) error {
	if dir := s.setup.PluginCacheDir; dir != "" {
		// Terraform refuses a cache dir that does not exist, used or not.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("terraform: plugin cache: %w", err)
		}
	}
	if dir := s.setup.PluginCacheDir; dir != "" && needsProviders(s.setup.WorkDir) {
		unlock, err := lockFile(ctx, filepath.Join(dir, cacheLockName))
		if err != nil {
			return fmt.Errorf("terraform: plugin cache lock: %w", err)
		}
		defer unlock()
	}
	key := initKey(s.setup, s.bin, s.version)
	if key != "" {
		if restored, err := restoreInit(s.setup, key); err != nil {
			fmt.Fprintf(s.log, "[strata] the layer's earlier init could not be reused, running init: %v\n", err)
		} else if restored {
			fmt.Fprintf(s.log, "[strata] init skipped: the providers, modules and backend are those of an earlier init of this layer\n")
			return nil
		}
	}
	err := s.step("init", func() error { return s.runInit(ctx) })
	if err == nil && key != "" {
		// Before any of the layer's code runs: what is kept is init's alone.
		if serr := saveInit(s.setup, key); serr != nil {
			fmt.Fprintf(s.log, "[strata] init could not be kept for the next plan: %v\n", serr)
		}
	}
	return err
}

// runInit runs `init` with the flags terraform-exec's Init gives Terraform
// 0.15 and later (OpenTofu included), without its question first: it asks
// the binary's version, to choose the flags of older releases, and that is
// a Terraform process of its own, 0.1 to 0.3 s on every first plan of a
// layer. The environment is init's (the plugin cache writable).
func (s *session) runInit(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, s.tf.ExecPath(), "init", "-no-color", "-input=false", "-backend=true", "-get=true", "-upgrade=false")
	cmd.Dir = s.tf.WorkingDir()
	cmd.Env = commandEnv(s.initEnv)
	// As terraform-exec runs its commands: in a process group of its own,
	// killed with Strata; interrupted, then killed, when ctx ends.
	cmd.SysProcAttr = childproc.Attr()
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = s.setup.waitDelay()
	cmd.Stdout = s.log
	cmd.Stderr = io.MultiWriter(s.log, &s.stderr)
	return cmd.Run()
}

// needsProviders says whether init may install providers: the layer calls
// modules (their providers are not known here), configures a provider, or
// uses a resource or data source of a provider other than the built-in
// `terraform`. When in doubt (the layer does not parse), it says yes.
func needsProviders(dir string) bool {
	mod, diags := loadModule(dir)
	if diags.HasErrors() || len(mod.ModuleCalls) > 0 || len(mod.ProviderConfigs) > 0 {
		return true
	}
	for name := range mod.RequiredProviders {
		if name != builtinProvider {
			return true
		}
	}
	for _, rs := range []map[string]*tfconfig.Resource{mod.ManagedResources, mod.DataResources} {
		for _, r := range rs {
			if r.Provider.Name != builtinProvider {
				return true
			}
		}
	}
	return false
}

// builtinProvider is Terraform's own provider (terraform_data,
// terraform_remote_state), which init never installs.
const builtinProvider = "terraform"

// selectWorkspace selects the setup's workspace, creating it on first use.
func (s *session) selectWorkspace(ctx context.Context) error {
	ws := s.setup.Workspace
	if ws == "" || ws == "default" {
		return nil
	}
	if s.setup.State != nil {
		// The http backend has only "default": the workspace's state is
		// a state of its own in Strata (its own address).
		fmt.Fprintf(s.log, "[strata] workspace %s has its own state in Strata; Terraform runs in workspace default (terraform.workspace reads \"default\")\n", ws)
		return nil
	}
	err := s.step("workspace select "+ws, func() error { return s.tf.WorkspaceSelect(ctx, ws) })
	var tfErr *Error
	if err == nil || !errors.As(err, &tfErr) || !strings.Contains(tfErr.Message, "doesn't exist") {
		return err
	}
	return s.step("workspace new "+ws, func() error { return s.tf.WorkspaceNew(ctx, ws) })
}

// lockedBuffer is a bytes.Buffer that terraform-exec may write from its own goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *lockedBuffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
