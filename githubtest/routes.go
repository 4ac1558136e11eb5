package githubtest

// routes maps each operation the fake implements, as "METHOD /path/template"
// of GitHub's description, to its handler.
func (s *Server) routes() map[string]handlerFunc {
	return map[string]handlerFunc{
		"GET /app":                               s.getApp,
		"GET /repos/{owner}/{repo}/installation": s.getRepoInstallation,
		"POST /app/installations/{installation_id}/access_tokens": s.createAccessToken,
		"POST /app-manifests/{code}/conversions":                  s.convertManifest,

		"GET /app/installations":         s.listInstallations,
		"GET /installation/repositories": s.listInstallationRepos,

		"GET /user":               s.getUser,
		"GET /user/installations": s.listUserInstallations,
		"GET /user/installations/{installation_id}/repositories": s.listUserInstallationRepos,

		"GET /orgs/{org}/teams/{team_slug}/members": s.listTeamMembers,

		"GET /repos/{owner}/{repo}":                                     s.getRepo,
		"GET /repos/{owner}/{repo}/collaborators/{username}/permission": s.getPermission,

		"POST /repos/{owner}/{repo}/git/blobs":               s.createBlob,
		"GET /repos/{owner}/{repo}/git/blobs/{file_sha}":     s.getBlob,
		"POST /repos/{owner}/{repo}/git/trees":               s.createTree,
		"GET /repos/{owner}/{repo}/git/trees/{tree_sha}":     s.getTree,
		"POST /repos/{owner}/{repo}/git/commits":             s.createCommit,
		"GET /repos/{owner}/{repo}/git/commits/{commit_sha}": s.getGitCommit,
		"GET /repos/{owner}/{repo}/git/ref/{ref}":            s.getRef,
		"GET /repos/{owner}/{repo}/git/matching-refs/{ref}":  s.matchingRefs,
		"POST /repos/{owner}/{repo}/git/refs":                s.createRef,
		"PATCH /repos/{owner}/{repo}/git/refs/{ref}":         s.updateRef,
		"DELETE /repos/{owner}/{repo}/git/refs/{ref}":        s.deleteRef,

		"GET /repos/{owner}/{repo}/commits/{ref}":              s.getCommit,
		"GET /repos/{owner}/{repo}/compare/{basehead}":         s.compare,
		"GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls": s.pullsOfCommit,
		"GET /repos/{owner}/{repo}/contents/{path}":            s.getContents,
		"GET /repos/{owner}/{repo}/tarball/{ref}":              s.tarballLink,

		"GET /repos/{owner}/{repo}/pulls":                       s.listPulls,
		"POST /repos/{owner}/{repo}/pulls":                      s.createPull,
		"PATCH /repos/{owner}/{repo}/pulls/{pull_number}":       s.updatePull,
		"GET /repos/{owner}/{repo}/pulls/{pull_number}":         s.getPull,
		"GET /repos/{owner}/{repo}/pulls/{pull_number}/files":   s.pullFiles,
		"GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": s.pullReviews,

		"GET /repos/{owner}/{repo}/issues/{issue_number}":                   s.getIssue,
		"POST /repos/{owner}/{repo}/issues":                                 s.createIssue,
		"PATCH /repos/{owner}/{repo}/issues/{issue_number}":                 s.updateIssue,
		"GET /repos/{owner}/{repo}/issues/{issue_number}/comments":          s.listComments,
		"POST /repos/{owner}/{repo}/issues/{issue_number}/comments":         s.createComment,
		"GET /repos/{owner}/{repo}/issues/comments/{comment_id}":            s.getComment,
		"PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}":          s.updateComment,
		"POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": s.createReaction,

		"POST /repos/{owner}/{repo}/check-runs":                 s.createCheckRun,
		"GET /repos/{owner}/{repo}/check-runs/{check_run_id}":   s.getCheckRun,
		"PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}": s.updateCheckRun,
		"GET /repos/{owner}/{repo}/commits/{ref}/check-runs":    s.listCheckRuns,
		"GET /repos/{owner}/{repo}/commits/{ref}/status":        s.combinedStatus,
		"POST /repos/{owner}/{repo}/statuses/{sha}":             s.createStatus,
	}
}
