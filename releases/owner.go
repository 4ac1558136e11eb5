package releases

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"helm.sh/helm/v3/pkg/release"
)

// Every revision /helm-test writes is labeled with the repository and PR it
// came from, so that the release's own history says who installed it:
// cleanup on close uninstalls a release only when this PR wrote all of it.
const (
	labelRepo = "strata.dev/repo"
	labelPR   = "strata.dev/pr"
)

// ownerLabels label a revision as written by pr of repo. A label value
// cannot hold "/", and a repository's name may be longer than a label's 63
// characters: the repository is a digest of its name.
func ownerLabels(repo string, pr int) map[string]string {
	return map[string]string{labelRepo: repoDigest(repo), labelPR: strconv.Itoa(pr)}
}

func repoDigest(repo string) string {
	sum := sha256.Sum256([]byte(repo))
	return hex.EncodeToString(sum[:])[:32]
}

// installedOnlyBy decides whether pr of repo wrote every revision the
// release's history holds: a release another PR upgraded, or one Strata
// did not install (a shared release that happens to have the name), is
// never uninstalled by the cleanup of this PR.
func installedOnlyBy(history []*release.Release, repo string, pr int) bool {
	if len(history) == 0 {
		return false
	}
	want := ownerLabels(repo, pr)
	for _, r := range history {
		if r.Labels[labelRepo] != want[labelRepo] || r.Labels[labelPR] != want[labelPR] {
			return false
		}
	}
	return true
}
