// Package gitcommit writes a set of files under a path of a branch as one
// commit through GitHub's Git Data API, with a compare-and-swap of the ref.
package gitcommit

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/ghretry"
)

// Destination is where files are committed.
type Destination struct {
	Owner, Repo, Branch, Path string
}

func (d Destination) String() string {
	return fmt.Sprintf("%s/%s@%s:%s", d.Owner, d.Repo, d.Branch, d.Path)
}

// prefix is dest.path as a tree prefix: "" for the branch root.
func (d Destination) prefix() string { return strings.Trim(path.Clean("/"+d.Path), "/") }

func (d Destination) full(name string) string {
	if p := d.prefix(); p != "" {
		return p + "/" + name
	}
	return name
}

// Guard looks at what the Destination holds now (nil when nothing was
// hydrated there) and returns why this hydration must not replace it, or "".
type Guard func(ctx context.Context, current *hydrate.SyncState) (string, error)

// Same tells, when the files differ from what the Destination holds (its
// SyncState, nil when none, and its files under dest.path as blob SHAs by
// repo-relative path), whether they are the same output all the same, so
// that nothing is committed: Result.SameAs is then what it returns.
type Same func(ctx context.Context, current *hydrate.SyncState, held map[string][]byte) (string, error)

// Result is what a commit of hydrated files did.
type Result struct {
	Commit  string // the new commit, "" when none was made
	Changes []hydrate.FileChange
	Skipped string // why nothing was committed though files differ
	// SameAs is what Writer.Same said of files that differ only in what
	// does not count (the source commit they name): nothing was committed.
	SameAs string
}

// casAttempts bounds the retries of a ref update that lost a race.
const casAttempts = 8

// Writer commits through one installation's client.
type Writer struct {
	GitHub *github.Client
	// BeforeRefUpdate runs between building a commit and moving the branch
	// to it; tests use it to push concurrently.
	BeforeRefUpdate func(attempt int)
	// Same, when set, keeps files that differ from the Destination only
	// in what it says does not count from being committed.
	Same Same
	// Backoff is the first wait before rebuilding on a moved branch; it
	// doubles with each attempt, with full jitter, so that writers racing
	// for one branch spread out. 100 ms when zero.
	Backoff time.Duration
}

// backoff waits before attempt (2, 3, ...): a random time up to Backoff
// doubled per attempt, at most 5 s.
func (w Writer) backoff(ctx context.Context, attempt int) error {
	base := w.Backoff
	if base <= 0 {
		base = 100 * time.Millisecond
	}
	t := time.NewTimer(ghretry.FullJitter(ghretry.Ceiling(base, 5*time.Second, attempt-2)))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// Commit makes the files under dest.path exactly files, in one commit on
// dest.branch through the Git Data API (the branch is created when missing).
// The branch update is a compare-and-swap: when another push moved it, the
// commit is rebuilt on the new tip, and guard is asked again.
func (w Writer) Commit(ctx context.Context, dest Destination, files map[string][]byte, message string, guard Guard) (*Result, error) {
	gh := w.GitHub
	blobs := make(map[string][]byte, len(files)) // file -> blob SHA, for comparing with the tree
	for name, content := range files {
		blobs[name] = []byte(blobSHA(content))
	}
	for attempt := 1; attempt <= casAttempts; attempt++ {
		if attempt > 1 {
			if err := w.backoff(ctx, attempt); err != nil {
				return nil, err
			}
		}
		tip, err := branchTip(ctx, gh, dest)
		if err != nil {
			return nil, err
		}
		current, treeSHA, err := destFiles(ctx, gh, dest, tip)
		if err != nil {
			return nil, err
		}
		state, err := destState(ctx, gh, dest, current)
		if err != nil {
			return nil, err
		}
		if guard != nil {
			why, err := guard(ctx, state)
			if err != nil || why != "" {
				return &Result{Skipped: why}, err
			}
		}
		changes, changed := hydrate.Plan(current, dest.Path, blobs)
		if !changed {
			return &Result{}, nil
		}
		if w.Same != nil {
			same, err := w.Same(ctx, state, current)
			if err != nil || same != "" {
				return &Result{SameAs: same}, err
			}
		}
		entries := make([]*github.TreeEntry, 0, len(changes))
		for i := range changes {
			c := &changes[i]
			e := &github.TreeEntry{Path: github.String(c.Path), Mode: github.String("100644"), Type: github.String("blob")}
			if !c.Delete {
				rel := strings.TrimPrefix(strings.TrimPrefix(c.Path, dest.prefix()), "/")
				c.Content = files[rel]
				e.Content = github.String(string(c.Content))
			}
			entries = append(entries, e)
		}
		tree, _, err := gh.Git.CreateTree(ctx, dest.Owner, dest.Repo, treeSHA, entries)
		if err != nil {
			return nil, fmt.Errorf("create tree on %s: %w", dest, err)
		}
		var parents []*github.Commit
		if tip != "" {
			parents = []*github.Commit{{SHA: github.String(tip)}}
		}
		commit, _, err := gh.Git.CreateCommit(ctx, dest.Owner, dest.Repo,
			&github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: tree.SHA}, Parents: parents}, nil)
		if err != nil {
			return nil, fmt.Errorf("create commit on %s: %w", dest, err)
		}
		if w.BeforeRefUpdate != nil {
			w.BeforeRefUpdate(attempt)
		}
		ref := &github.Reference{Ref: github.String("refs/heads/" + dest.Branch), Object: &github.GitObject{SHA: commit.SHA}}
		if tip == "" {
			_, _, err = gh.Git.CreateRef(ctx, dest.Owner, dest.Repo, ref)
		} else {
			_, _, err = gh.Git.UpdateRef(ctx, dest.Owner, dest.Repo, ref, false)
		}
		if isConflict(err) {
			continue // another push moved (or created) the branch: rebuild on its tip
		}
		if err != nil {
			return nil, fmt.Errorf("move %s to %s: %w", dest, commit.GetSHA(), err)
		}
		return &Result{Commit: commit.GetSHA(), Changes: changes}, nil
	}
	return nil, fmt.Errorf("%s kept moving: gave up after %d attempts to update it", dest, casAttempts)
}

// isConflict is GitHub's answer to a ref update that is not a fast forward,
// or to creating a ref that another push created first.
func isConflict(err error) bool {
	var ge *github.ErrorResponse
	if !errors.As(err, &ge) || ge.Response == nil || ge.Response.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	return strings.Contains(ge.Message, "not a fast forward") || strings.Contains(ge.Message, "already exists")
}

// branchTip is the commit dest.branch points at, "" when it does not exist.
func branchTip(ctx context.Context, gh *github.Client, dest Destination) (string, error) {
	ref, resp, err := gh.Git.GetRef(ctx, dest.Owner, dest.Repo, "heads/"+dest.Branch)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read branch %s of %s/%s: %w", dest.Branch, dest.Owner, dest.Repo, err)
	}
	return ref.GetObject().GetSHA(), nil
}

// destFiles lists the blobs under dest.path at tip by path, with their blob
// SHAs standing for the contents, and returns tip's tree.
func destFiles(ctx context.Context, gh *github.Client, dest Destination, tip string) (map[string][]byte, string, error) {
	out := map[string][]byte{}
	if tip == "" {
		return out, "", nil
	}
	tree, _, err := gh.Git.GetTree(ctx, dest.Owner, dest.Repo, tip, true)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", dest, err)
	}
	if tree.GetTruncated() {
		return nil, "", fmt.Errorf("the tree of %s is too large for GitHub to list", dest)
	}
	prefix := dest.prefix()
	for _, e := range tree.Entries {
		p := e.GetPath()
		if e.GetType() != "blob" || (prefix != "" && !strings.HasPrefix(p, prefix+"/")) {
			continue
		}
		out[p] = []byte(e.GetSHA())
	}
	return out, tree.GetSHA(), nil
}

// destState reads the .strata-sync.yaml the Destination holds, nil when none.
func destState(ctx context.Context, gh *github.Client, dest Destination, current map[string][]byte) (*hydrate.SyncState, error) {
	sha, ok := current[dest.full(hydrate.SyncStateFile)]
	if !ok {
		return nil, nil
	}
	blob, _, err := gh.Git.GetBlob(ctx, dest.Owner, dest.Repo, string(sha))
	if err != nil {
		return nil, fmt.Errorf("read %s in %s: %w", hydrate.SyncStateFile, dest, err)
	}
	content := []byte(blob.GetContent())
	if blob.GetEncoding() == "base64" {
		if content, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(blob.GetContent(), "\n", "")); err != nil {
			return nil, fmt.Errorf("decode %s in %s: %w", hydrate.SyncStateFile, dest, err)
		}
	}
	state, err := hydrate.ParseSyncState(content)
	if err != nil {
		// Not ours to trust: hydrating replaces it.
		return nil, nil
	}
	return &state, nil
}

// BlobSHA is the Git object name of a blob with this content, as the
// held files of a Same are named.
func BlobSHA(content []byte) string { return blobSHA(content) }

// blobSHA is the Git object name of a blob with this content.
func blobSHA(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}
