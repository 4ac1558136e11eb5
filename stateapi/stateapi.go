// Package stateapi is the public API behind `strata state pull` and
// `strata state push` (docs/state.md, docs/cli.md): GET and PUT of a
// layer's managed Terraform state at /api/state/{owner}/{repo}/{layer}
// (?workspace=), for a person with their own GitHub token. GitHub says who
// the token is (GET /user) and the installation says their permission on
// the repository; the permission table (access) lets admins only. Unlike
// the loopback backend Terraform uses (tfstate), this one is on the public
// listener: a laptop reaches it.
package stateapi

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"strata.dev/strata/access"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// Prefix is where the API is served.
const Prefix = "/api/state/"

// MaxStateSize bounds a pushed state, as the backend bounds Terraform's
// writes (tfstate.MaxStateSize).
const MaxStateSize = 256 << 20

// identityTTL is how long a token's login is remembered. A person pulling
// and pushing in a row makes one GET /user, not one per request, and a
// script looping on pull does not spend their 5,000 an hour. It is safe
// because only the identity is cached, by the token's SHA-256: the
// permission is asked on every request, so an admin demoted is refused at
// once, and a revoked token still names the same person for at most a
// minute.
const identityTTL = time.Minute

// Options configure the API.
type Options struct {
	// Deps are the workers': the store, the App's clients and the
	// permission table.
	Deps *worker.Deps
	// Users makes clients for people's own tokens (no shared response
	// cache between users).
	Users githubapp.ClientCreator
	Log   zerolog.Logger
	// Retention is how many versions of a state a push keeps (server
	// config state.retention; the store's default when zero).
	Retention int
	// Now is the time; time.Now when nil.
	Now func() time.Time
}

// API serves Prefix.
type API struct {
	o   Options
	mu  sync.Mutex
	ids map[[sha256.Size]byte]identity
}

type identity struct {
	login   string
	expires time.Time
}

// New builds the API.
func New(o Options) *API {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &API{o: o, ids: map[[sha256.Size]byte]identity{}}
}

// ServeHTTP answers GET (pull) and PUT (push) of one state.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// A state holds the layer's secrets: no cache anywhere keeps it.
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodGet && r.Method != http.MethodPut {
		w.Header().Set("Allow", "GET, PUT")
		fail(w, http.StatusMethodNotAllowed, "GET pulls a state, PUT pushes one")
		return
	}
	owner, repo, layer, ok := splitPath(r.URL.EscapedPath())
	if !ok {
		fail(w, http.StatusNotFound, "the path is "+Prefix+"OWNER/REPO/LAYER (the layer's name path-escaped), with ?workspace=NAME")
		return
	}
	key := store.StateKey{Repo: owner + "/" + repo, Layer: layer, Workspace: r.URL.Query().Get("workspace")}
	if key.Workspace == "" {
		key.Workspace = "default"
	}
	action := access.StatePull
	if r.Method == http.MethodPut {
		action = access.StatePush
	}
	log := a.o.Log.With().Str("repo", key.Repo).Str("layer", key.Layer).Str("workspace", key.Workspace).Str("action", action).Logger()
	login, status, why := a.authorize(r.Context(), r, owner, repo, action)
	if status != http.StatusOK {
		log.Info().Str("user", login).Int("status", status).Str("reason", why).Msg("state API: refused")
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
		}
		fail(w, status, why)
		return
	}
	log = log.With().Str("user", login).Logger()
	if r.Method == http.MethodGet {
		a.pull(w, r, key, log)
		return
	}
	a.push(w, r, key, login, log)
}

// splitPath reads owner, repository and layer from the escaped path; the
// layer is the rest, so a layer named infra/net may be sent escaped or not.
func splitPath(escaped string) (owner, repo, layer string, ok bool) {
	rest, found := strings.CutPrefix(escaped, Prefix)
	if !found {
		return "", "", "", false
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) != 3 {
		return "", "", "", false
	}
	var err error
	for i, p := range parts {
		if parts[i], err = url.PathUnescape(p); err != nil || parts[i] == "" {
			return "", "", "", false
		}
	}
	return parts[0], parts[1], parts[2], true
}

// authorize says who the request's token is and whether they may do
// action on owner/repo: 200 and the login, or the status and reason to
// answer.
func (a *API) authorize(ctx context.Context, r *http.Request, owner, repo, action string) (login string, status int, why string) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(token) == "" {
		return "", http.StatusUnauthorized, "send your GitHub token as Authorization: Bearer TOKEN (strata state reads GITHUB_TOKEN, GH_TOKEN or `gh auth token`)"
	}
	login, err := a.whoIs(ctx, strings.TrimSpace(token))
	if err != nil {
		var gerr *github.ErrorResponse
		if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusUnauthorized {
			return "", http.StatusUnauthorized, "GitHub does not know this token (expired or revoked?): log in again (gh auth login) or set a new GITHUB_TOKEN"
		}
		a.o.Log.Warn().Err(err).Msg("state API: GitHub did not say who a token is")
		return "", http.StatusBadGateway, "GitHub did not say who your token is; try again in a moment"
	}
	inst, err := a.installation(ctx, owner, repo)
	if err != nil {
		var gerr *github.ErrorResponse
		if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusNotFound {
			return login, http.StatusNotFound, fmt.Sprintf("Strata's GitHub App is not installed on %s/%s", owner, repo)
		}
		a.o.Log.Warn().Err(err).Msg("state API: find the repository's installation")
		return login, http.StatusBadGateway, "GitHub did not answer about the repository; try again in a moment"
	}
	gr, err := a.o.Deps.Repo(jobs.NewRepo(inst, owner, repo))
	if err != nil {
		return login, http.StatusBadGateway, "Strata could not reach the repository's installation; try again in a moment"
	}
	d, err := a.o.Deps.Authorize(ctx, gr, login, action)
	if err != nil {
		a.o.Log.Warn().Err(err).Msg("state API: read the user's permission")
		return login, http.StatusBadGateway, "GitHub did not say your permission on the repository; try again in a moment"
	}
	if !d.Allowed {
		if d.Quiet {
			// Someone who cannot read the repository learns nothing of it.
			return login, http.StatusNotFound, fmt.Sprintf("%s/%s: not found, or @%s cannot read it", owner, repo, login)
		}
		return login, http.StatusForbidden, d.Reason
	}
	return login, http.StatusOK, ""
}

// whoIs is the login of a token, from the cache or GET /user.
func (a *API) whoIs(ctx context.Context, token string) (string, error) {
	sum := sha256.Sum256([]byte(token))
	now := a.o.Now()
	a.mu.Lock()
	id, ok := a.ids[sum]
	a.mu.Unlock()
	if ok && now.Before(id.expires) {
		return id.login, nil
	}
	gh, err := a.o.Users.NewTokenClient(token)
	if err != nil {
		return "", err
	}
	user, _, err := gh.Users.Get(ctx, "")
	if err != nil {
		return "", err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, v := range a.ids {
		// The map holds at most the minute's tokens.
		if !now.Before(v.expires) {
			delete(a.ids, k)
		}
	}
	a.ids[sum] = identity{login: user.GetLogin(), expires: now.Add(identityTTL)}
	return user.GetLogin(), nil
}

// installation is the App's installation on owner/repo.
func (a *API) installation(ctx context.Context, owner, repo string) (int64, error) {
	gh, err := a.o.Deps.Clients.NewAppClient()
	if err != nil {
		return 0, err
	}
	inst, _, err := gh.Apps.FindRepositoryInstallation(ctx, owner, repo)
	if err != nil {
		return 0, err
	}
	return inst.GetID(), nil
}

func (a *API) pull(w http.ResponseWriter, r *http.Request, key store.StateKey, log zerolog.Logger) {
	content, v, err := a.o.Deps.Store.CurrentState(r.Context(), key)
	if err != nil {
		log.Error().Err(err).Msg("state API: read the state")
		fail(w, http.StatusInternalServerError, "Strata could not read the state; see the server log")
		return
	}
	if content == nil {
		fail(w, http.StatusNotFound, fmt.Sprintf("Strata keeps no state for %s", key))
		return
	}
	log.Info().Int64("serial", v.Serial).Msg("state API: pulled")
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Strata-State-Serial", strconv.FormatInt(v.Serial, 10))
	h.Set("Strata-State-Lineage", v.Lineage)
	_, _ = w.Write(content)
}

func (a *API) push(w http.ResponseWriter, r *http.Request, key store.StateKey, login string, log zerolog.Logger) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxStateSize))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		fail(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the state is larger than %d MiB", MaxStateSize>>20))
		return
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "the state was not received: "+err.Error())
		return
	}
	ctx := r.Context()
	st := a.o.Deps.Store
	// A push under Terraform's lock would be overwritten by the run that
	// holds it, or would overwrite what it just wrote.
	if l, err := st.StateLockOf(ctx, key); err != nil {
		log.Error().Err(err).Msg("state API: read the state lock")
		fail(w, http.StatusInternalServerError, "Strata could not read the state lock; see the server log")
		return
	} else if l != nil {
		fail(w, http.StatusLocked, fmt.Sprintf("the state of %s is locked by Terraform (lock %s, run %d): wait for the run to end, "+
			"or clear the lock on the layer's page or with /unlock %s as an admin", key, l.ID, l.RunID, key.Layer))
		return
	}
	force := r.URL.Query().Get("force") == "true"
	v, err := st.PutState(ctx, key, body, store.StateVersion{By: login, Kind: store.StateByPush}, force, a.o.Retention)
	switch {
	case errors.Is(err, store.ErrStateConflict):
		fail(w, http.StatusConflict, strings.Replace(err.Error(), "push it with force", "push it with --force", 1))
		return
	case errors.Is(err, store.ErrNotState):
		fail(w, http.StatusBadRequest, err.Error())
		return
	case err != nil:
		log.Error().Err(err).Msg("state API: write the state")
		fail(w, http.StatusInternalServerError, "Strata could not write the state; see the server log")
		return
	}
	log.Info().Int64("serial", v.Serial).Bool("force", force).Msg("state API: pushed")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "pushed the state of %s: version %d, serial %d, lineage %s\n", key, v.ID, v.Serial, v.Lineage)
}

// fail answers with a reason the CLI prints as it is.
func fail(w http.ResponseWriter, status int, why string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, why)
}
