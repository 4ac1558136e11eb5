package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/words"
)

// hydrateRun is what `strata run hydrate` is asked to do.
type hydrateRun struct {
	repoDir      string
	sync         string
	diff         bool
	dest         string // the destination's files; default DIR/dest.path
	sourceCommit string // default: the checkout's HEAD
	sourceRepo   string // default: owner/name of the origin remote
	allowRemote  []string
}

// strata run hydrate: the build a push to the default branch starts, on a
// local checkout, printed instead of committed.
func init() {
	var r hydrateRun
	c := &cobra.Command{
		Use:   "hydrate SYNC",
		Short: "Hydrate a sync from a checkout and print its manifests, or their diff with the destination",
		Long: `Build SYNC of the checkout's .strata.yaml the way the server hydrates it
(kustomize build of its source, image tags and digest pins, the
source-commit annotation) and print the manifests on stdout, one YAML
stream; nothing is committed. The source commit is the checkout's HEAD
unless --source-commit says otherwise; the files built are those of the
working tree.

--diff prints instead the unified diff from the destination's files to
the hydrated ones: what a hydration would commit. The destination is the
sync's dest.path in the checkout, or --dest (a checkout of dest.branch,
say); when it does not exist every file shows as added.

Remote bases and resources are fetched only when --allow-remote allows
them, as the server's hydrate.allow_remote does.`,
		Args: usageArgs(exactlyOne("SYNC")),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			r.sync = args[0]
			return runHydrate(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), r)
		},
	}
	c.Flags().StringVar(&r.repoDir, "repo", ".", "the checkout's root")
	c.Flags().BoolVar(&r.diff, "diff", false, "print the diff with the destination instead of the manifests")
	c.Flags().StringVar(&r.dest, "dest", "", "directory holding the destination's files (default: the sync's dest.path in the checkout)")
	c.Flags().StringVar(&r.sourceCommit, "source-commit", "", "commit the manifests are annotated with (default: the checkout's HEAD)")
	c.Flags().StringVar(&r.sourceRepo, "source-repo", "", "owner/name of the source repository (default: the origin remote's)")
	c.Flags().StringArrayVar(&r.allowRemote, "allow-remote", nil, "remote reference kustomize may fetch, as host/path pattern (repeatable)")
	runCmd.AddCommand(c)
}

func runHydrate(ctx context.Context, out, log io.Writer, r hydrateRun) error {
	root, err := filepath.Abs(r.repoDir)
	if err != nil {
		return err
	}
	repo, err := localRepo(root, "syncs")
	if err != nil {
		return err
	}
	var sync *config.Sync
	var names []string
	for i, s := range repo.Syncs {
		names = append(names, s.Name)
		if s.Name == r.sync {
			sync = &repo.Syncs[i]
		}
	}
	if sync == nil {
		return unknownName("sync", r.sync, plainNames(names), filepath.Join(root, config.RepoFile))
	}
	commit := r.sourceCommit
	if commit == "" {
		if commit, err = git(root, "rev-parse", "HEAD"); err != nil {
			return fmt.Errorf("the source commit: %s is not a git checkout with a commit (%v): pass --source-commit", root, err)
		}
	}
	source := r.sourceRepo
	if source == "" {
		url, _ := git(root, "remote", "get-url", "origin")
		source = repoOfRemote(url)
	}
	var rules []hydrate.ImageRule
	for _, img := range sync.Images {
		rules = append(rules, hydrate.ImageRule{Name: img.Name, Tag: img.Tag, Pin: string(img.Pin)})
	}
	res, err := hydrate.Hydrate(ctx, hydrate.Input{
		Sync: sync.Name, Root: root, Source: sync.Source, SourceRepo: source, SourceCommit: commit,
		Images: rules, Resolver: hydrate.NewRegistryResolver(), AllowRemote: r.allowRemote,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "Hydrated sync %s from %s at %s: %s (%s)\n", sync.Name, sync.Source, commit,
		words.Count(res.Resources, "resource", "resources"), strings.Join(res.Kinds, ", "))
	if !r.diff {
		writeManifests(out, res.Files)
		return nil
	}
	dest := r.dest
	if dest == "" {
		dest = filepath.Join(root, filepath.FromSlash(sync.Dest.Path))
	}
	old, err := readDest(dest)
	if errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(log, "%s does not exist: every file shows as added\n", dest)
	} else if err != nil {
		return err
	}
	diff := hydrate.Diff(old, res.Files)
	if diff == "" {
		fmt.Fprintf(log, "No changes: %s already holds these files\n", dest)
	}
	fmt.Fprint(out, diff)
	return nil
}

// writeManifests prints the hydrated resources as one YAML stream, each
// headed by its file name; the sync's state file is Strata's, not a
// manifest, and is left out.
func writeManifests(w io.Writer, files map[string][]byte) {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != hydrate.SyncStateFile {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "---\n# %s\n%s", n, files[n])
		if !strings.HasSuffix(string(files[n]), "\n") {
			fmt.Fprintln(w)
		}
	}
}

// readDest reads the regular files under dir by their slash path in it:
// the files a hydration replaces or deletes.
func readDest(dir string) (map[string][]byte, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return fs.SkipDir
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		files[p] = data
		return err
	})
	return files, err
}

// git runs git in dir and returns its trimmed output.
func git(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && len(exit.Stderr) > 0 {
			return "", errors.New(strings.TrimSpace(string(exit.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// repoOfRemote is the owner/name of a GitHub remote URL (https, ssh or
// scp-like), or "local" when it names none.
func repoOfRemote(url string) string {
	url = strings.TrimSuffix(strings.TrimSuffix(url, "/"), ".git")
	if i := strings.Index(url, "://"); i >= 0 {
		url = url[i+3:]
		if _, path, ok := strings.Cut(url, "/"); ok {
			url = path
		} else {
			url = ""
		}
	} else if _, path, ok := strings.Cut(url, ":"); ok {
		url = path
	} else {
		url = ""
	}
	parts := strings.Split(url, "/")
	if len(parts) < 2 || parts[len(parts)-2] == "" || parts[len(parts)-1] == "" {
		return "local"
	}
	return parts[len(parts)-2] + "/" + parts[len(parts)-1]
}
