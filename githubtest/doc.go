// Package githubtest is a stateful fake GitHub for Strata's tests.
//
// NewServer starts it on an httptest.Server, closed when the test ends. The
// REST API is at APIURL() (URL()+"/api/v3/", GitHub Enterprise style),
// GraphQL at GraphQLURL(), the web at WebURL(). The fake has one GitHub App
// (AppID, PrivateKeyPEM, slug "strata-test", bot "strata-test[bot]") with one
// installation (InstallationID) on every repository.
//
// # Refusing what GitHub refuses
//
// Every REST request is matched and validated against GitHub's OpenAPI
// description (../shared/github-api, or $STRATA_GITHUB_API_DIR), loaded once
// per test binary. Parameters such as {ref} and {path} span several path
// segments, as on GitHub. An unknown route or method (404), an invalid query
// or body (422), and GitHub's unstated limits (422 "Validation Failed": a
// comment of more than 65,536 characters, a check-run summary or text of
// more than 65,535 bytes, more than 3 check-run actions) call t.Errorf and
// are recorded in Violations. A request without credentials gets 401; the App
// endpoints want the App's RS256 JWT, the others an installation token from
// POST /app/installations/{id}/access_tokens (or Server.Token). Responses
// are not validated.
//
// # Being unhappy like GitHub
//
// Every response carries the installation's X-RateLimit-Limit, -Remaining,
// -Used and -Reset headers; its REST requests count, 5000 an hour.
// SetRateLimit(n, resetAfter) leaves n requests before the limit runs out,
// then refuses every request (403, remaining 0, "API rate limit exceeded for
// installation ID ...") until the reset, resetAfter later;
// ExhaustRateLimitBefore(method, path, resetAfter) makes it run out just
// before a given request. SetClock puts the windows and resets on a clock
// of the test's: with a Clock, which a client's waits move
// (apptest.Options.GitHubClock), no test waits out a reset.
// SecondaryLimitNext(method, path, retryAfter) refuses the next matching
// request with GitHub's secondary-limit 403 and Retry-After; FailNext
// answers one with any status (say 502). None of these refusals performs
// the request; Limited and Failed list them.
//
// # State for tests
//
//	repo := srv.AddRepo("acme", "infra")            // main, with a README.md
//	sha := repo.Commit("main", map[string]string{"infra/main.tf": "...", "old.tf": githubtest.Deleted}, "msg")
//	fork := srv.AddFork(repo, "alice")
//	fork.Commit("feature", files, "msg")
//	pr := repo.OpenPR("alice:feature", "main", "alice") // or a branch of repo
//	repo.PushPR(pr.Number, files, "msg"); repo.ClosePR(pr.Number, true) // merges
//	repo.SetPermission("bob", "maintain"); repo.AddReview(pr.Number, "bob", "APPROVED")
//	repo.SetMergeable(pr.Number, false, "dirty")
//
// Read back with Branch, FileAt, Tree, Comments, Reactions, CheckRuns,
// CheckRun (the latest by name) and AllCheckRuns; Server.Requests logs every
// request, TarballDownloads counts archive downloads, WaitFor polls.
// GET .../collaborators/{user}/permission answers GitHub's legacy
// "permission" (maintain shows as write, triage as read) and the exact
// "role_name"; users without a permission have none. A tarball redirects
// (302) to a codeload-like URL on the same server, serving a gzipped tar with
// a pax global header and one top-level folder OWNER-REPO-SHORTSHA/.
// GraphQL answers only the minimizeComment mutation.
//
// # Users signing in
//
// The web URL serves the App's OAuth web flow, outside the REST
// description and its validation. OAuthClient returns the App's client id
// and secret (the secret a manifest conversion returns works too).
// GET /login/oauth/authorize?client_id=&redirect_uri=&state= renders a
// sign-in form (input id="login", button id="authorize"); its POST, for a
// user the fake knows (AddUser, or one with a permission), redirects to
// redirect_uri with a one-use code, valid 10 minutes, and the state.
// POST /login/oauth/access_token exchanges it for a "ghu_" user token,
// with the client credentials in the body or basic auth, JSON when asked,
// else form-encoded; errors answer 200 with GitHub's "error" field
// (bad_verification_code, incorrect_client_credentials,
// redirect_uri_mismatch). PKCE is checked when the client sends a
// code_challenge. SetCallbackURL makes redirect_uri stay under a callback
// URL; DenyAuthorize makes the next sign-in redirect with
// error=access_denied; UserToken mints a token without the form.
//
// A user token serves GET /user, /user/installations (the installation,
// when the user can read one of its repositories) and
// /user/installations/{id}/repositories (those the user has read or more
// on, by SetPermission), with the user's own 5000-an-hour limit. They
// refuse an installation token or JWT with 403, as the other routes refuse
// a user token (the App's routes, wanting a JWT, with 401).
//
// # Webhooks
//
// The payload builders (IssueCommentEvent, IssueCommentEditedEvent,
// PullRequestEvent, PullRequestReviewEvent, PushEvent, CheckRunEvent) build
// payloads from the fake's state and return them with their event name;
// IssueCommentEvent also adds the comment. Deliver signs and POSTs a payload
// like GitHub, after validating it against GitHub's webhook schemas
// (ValidateWebhook).
//
//	p, event := repo.IssueCommentEvent(pr.Number, "bob", "/plan")
//	resp := githubtest.Deliver(t, hookURL, secret, event, "delivery-1", p)
package githubtest
