package web

import (
	"context"
	"errors"
	"net/http"

	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// The Unlock and Release buttons are the PR's /unlock and /release: the
// same permission table decides here, for the page's answer, and the
// command job they enqueue decides again and acts, as for a comment.

func (u *UI) unlockLayer(w http.ResponseWriter, r *http.Request) {
	u.button(w, r, "unlock", r.PathValue("layer"), "not-locked", func(ctx context.Context, repo, layer string) (int, error) {
		l, err := u.opts.Deps.Store.Lock(ctx, repo, layer)
		if err != nil {
			return 0, err
		}
		return l.PR, nil
	})
}

func (u *UI) releaseSync(w http.ResponseWriter, r *http.Request) {
	u.button(w, r, "release", r.PathValue("sync"), "not-held", func(ctx context.Context, repo, sync string) (int, error) {
		t, err := u.opts.Deps.Store.Takeover(ctx, repo, sync)
		if err != nil {
			return 0, err
		}
		return t.PR, nil
	})
}

// button runs "/name target" on the PR that holds target (holder reads
// it from the store; ErrNotFound when nothing holds it, which the page
// says with the flash named none).
func (u *UI) button(w http.ResponseWriter, r *http.Request, name, target, none string, holder func(ctx context.Context, repo, target string) (int, error)) {
	v, repo, ok := u.pathRepo(w, r, true)
	if !ok {
		return
	}
	pr, err := holder(r.Context(), repo.FullName, target)
	if errors.Is(err, store.ErrNotFound) {
		http.Redirect(w, r, flashURL(repo, none, target, 0), http.StatusSeeOther)
		return
	}
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	u.command(w, r, v, repo, pr, name, target)
}

// command asks the permission table whether the viewer may run
// "/name target" on the PR; refused, it shows the repository page with the
// reason (403); allowed, it enqueues the command as a comment would.
func (u *UI) command(w http.ResponseWriter, r *http.Request, v *Viewer, repo Repo, number int, name, target string) {
	ctx := r.Context()
	log := u.opts.Log.With().Str("user", v.Login).Str("repo", repo.FullName).Int("pr", number).
		Str("command", name).Str("target", target).Logger()
	pr, err := u.opts.Deps.PR(ctx, repo.JobRepo(), number)
	if err != nil {
		log.Warn().Err(err).Msg("web UI: read the PR for a button")
		http.Redirect(w, r, flashURL(repo, "no-github", target, 0), http.StatusSeeOther)
		return
	}
	d, err := u.opts.Deps.Authorize(ctx, pr, v.Login, name)
	if err != nil {
		log.Warn().Err(err).Msg("web UI: read the user's permission for a button")
		http.Redirect(w, r, flashURL(repo, "no-github", target, 0), http.StatusSeeOther)
		return
	}
	if !d.Allowed {
		log.Info().Str("reason", d.Reason).Msg("web UI: button refused")
		u.showRepo(w, r, v, repo, http.StatusForbidden, "/"+name+" refused: "+d.Reason, true)
		return
	}
	cmd := jobs.Command{Repo: repo.JobRepo(), PR: number, User: v.Login, Body: "/" + name + " " + target}
	if _, err := u.opts.Deps.Queue.Enqueue(ctx, cmd, nil); err != nil {
		log.Error().Err(err).Msg("web UI: enqueue a button's command")
		http.Redirect(w, r, flashURL(repo, "not-started", target, 0), http.StatusSeeOther)
		return
	}
	log.Info().Msg("web UI: command requested")
	http.Redirect(w, r, flashURL(repo, name, target, number), http.StatusSeeOther)
}
