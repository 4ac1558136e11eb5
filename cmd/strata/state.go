package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// strata state pull|push: a layer's managed state on a Strata server
// (docs/state.md, docs/cli.md), with the user's own GitHub token, for
// moving state in and out. The server lets the repository's admins only.

var stateCmd = &cobra.Command{
	Use:   "state",
	Short: "Pull or push a layer's state that a Strata server keeps",
	Args:  cobra.ArbitraryArgs,
	RunE:  requireSubcommand,
}

// stateTimeout bounds one pull or push: a state of a few MB takes
// seconds; 256 MiB, the most the server takes, on a slow link, minutes.
const stateTimeout = 10 * time.Minute

// stateTarget is what both commands name: the server, the repository and
// the layer's workspace.
type stateTarget struct {
	server, repo, workspace string
}

func (t *stateTarget) flags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&t.server, "server", "", "the Strata server's URL (default: $STRATA_SERVER)")
	cmd.Flags().StringVar(&t.repo, "repo", "", "the repository, OWNER/NAME (default: the GitHub remote of the current directory's git checkout)")
	cmd.Flags().StringVar(&t.workspace, "workspace", "default", "the layer's Terraform workspace")
}

func init() {
	var pull stateTarget
	var out string
	pullCmd := &cobra.Command{
		Use:   "pull LAYER",
		Short: "Print a layer's current state (or write it to --out)",
		Long: `Print the current state of LAYER that the Strata server keeps, as Terraform's
JSON state file, or write it to --out (created with mode 0600: it holds the
layer's secrets). Needs admin permission on the repository.

The GitHub token is GITHUB_TOKEN, else GH_TOKEN, else what ` + "`gh auth token`" + ` prints.`,
		Example: `  strata state pull network --server https://strata.example.com --out network.tfstate
  strata state pull network --workspace prod > prod.tfstate`,
		Args: usageArgs(exactlyOne("LAYER")),
		RunE: func(cmd *cobra.Command, args []string) error {
			return statePull(cmd, pull, args[0], out)
		},
	}
	pull.flags(pullCmd)
	pullCmd.Flags().StringVarP(&out, "out", "o", "", "write the state to this file instead of stdout")

	var push stateTarget
	var force bool
	pushCmd := &cobra.Command{
		Use:   "push LAYER FILE",
		Short: "Make FILE the layer's current state",
		Long: `Send FILE (a Terraform state file, "-" for stdin) to the Strata server as the
new state of LAYER, recorded as a push by you. As Terraform's own backends
do, the server refuses a state of another lineage or an older serial than
the one it keeps (exit status 1, saying which); --force replaces it anyway.
A state locked by a running plan or apply is refused. Needs admin
permission on the repository.`,
		Example: `  terraform state pull > network.tfstate     # from the old backend
  strata state push network network.tfstate --server https://strata.example.com`,
		Args: usageArgs(func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("%s takes a LAYER and a FILE, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			return statePush(cmd, push, args[0], args[1], force)
		},
	}
	push.flags(pushCmd)
	pushCmd.Flags().BoolVar(&force, "force", false, "replace the server's state even when its lineage or serial conflicts")

	stateCmd.AddCommand(pullCmd, pushCmd)
	root.AddCommand(stateCmd)
}

func statePull(cmd *cobra.Command, t stateTarget, layer, out string) error {
	body, err := stateRequest(cmd, t, http.MethodGet, layer, nil, false)
	if err != nil {
		return err
	}
	if out == "" {
		_, err := cmd.OutOrStdout().Write(body)
		return err
	}
	if err := os.WriteFile(out, body, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote the state of %s to %s\n", layer, out)
	return nil
}

func statePush(cmd *cobra.Command, t stateTarget, layer, file string, force bool) error {
	var content []byte
	var err error
	if file == "-" {
		content, err = io.ReadAll(cmd.InOrStdin())
	} else {
		content, err = os.ReadFile(file)
	}
	if err != nil {
		return fmt.Errorf("read the state to push: %w", err)
	}
	body, err := stateRequest(cmd, t, http.MethodPut, layer, content, force)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(body)
	return err
}

// stateRequest sends one request to the server's state API and returns
// the body of a 200; any other answer is an error with the server's reason.
func stateRequest(cmd *cobra.Command, t stateTarget, method, layer string, content []byte, force bool) ([]byte, error) {
	server := t.server
	if server == "" {
		server = os.Getenv("STRATA_SERVER")
	}
	if server == "" {
		return nil, usageError(cmd, errors.New("name the Strata server with --server URL or STRATA_SERVER"))
	}
	base, err := url.Parse(strings.TrimSuffix(server, "/"))
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, usageError(cmd, fmt.Errorf("--server %q is not an http(s) URL", server))
	}
	repo := t.repo
	if repo == "" {
		if repo = repoOfCheckout(cmd.Context()); repo == "" {
			return nil, usageError(cmd, errors.New("name the repository with --repo OWNER/NAME (the current directory has no GitHub remote)"))
		}
	}
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, usageError(cmd, fmt.Errorf("--repo %q: want OWNER/NAME", repo))
	}
	token, err := githubToken(cmd.Context())
	if err != nil {
		return nil, err
	}
	q := url.Values{"workspace": {t.workspace}}
	if force {
		q.Set("force", "true")
	}
	// The layer is one path segment, whatever its slashes.
	target := base.String() + "/api/state/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/" + url.PathEscape(layer) + "?" + q.Encode()
	ctx, cancel := context.WithTimeout(cmd.Context(), stateTimeout)
	defer cancel()
	var rd io.Reader
	if content != nil {
		rd = bytes.NewReader(content)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if content != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("the Strata server did not answer: %w", err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("read the server's answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		why := strings.TrimSpace(string(body))
		if len(why) > 2000 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			why = "not Strata's answer: is " + server + " a Strata server?"
		}
		op := "pull"
		if method == http.MethodPut {
			op = "push"
		}
		return nil, fmt.Errorf("%s %s: %s (HTTP %d)", op, layer, why, res.StatusCode)
	}
	return body, nil
}

// githubToken is the user's GitHub token: GITHUB_TOKEN, GH_TOKEN, or the
// GitHub CLI's.
func githubToken(ctx context.Context) (string, error) {
	for _, env := range []string{"GITHUB_TOKEN", "GH_TOKEN"} {
		if v := strings.TrimSpace(os.Getenv(env)); v != "" {
			return v, nil
		}
	}
	if gh, err := exec.LookPath("gh"); err == nil {
		out, err := exec.CommandContext(ctx, gh, "auth", "token").Output()
		if v := strings.TrimSpace(string(out)); err == nil && v != "" {
			return v, nil
		}
	}
	return "", errors.New("no GitHub token: set GITHUB_TOKEN or GH_TOKEN, or log in with `gh auth login`")
}

// githubRemote reads OWNER/NAME from a remote's URL: https://HOST/O/N(.git),
// git@HOST:O/N(.git) or ssh://git@HOST/O/N(.git).
var githubRemote = regexp.MustCompile(`^(?:https?://[^/]+/|ssh://[^/]+/|[^@/]+@[^:/]+:)([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+?)(?:\.git)?/?$`)

// repoOfCheckout is OWNER/NAME of the current directory's origin remote,
// "" when there is none (no git, no checkout, another kind of remote).
func repoOfCheckout(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "git", "remote", "get-url", "origin").Output()
	if err != nil {
		return ""
	}
	m := githubRemote.FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return ""
	}
	return m[1] + "/" + m[2]
}
