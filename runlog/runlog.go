// Package runlog links a run's full log from checks and comments. A link is
// a capability: it carries a key derived from the App's webhook secret, so
// whoever sees the check (the repository's readers) can open the log, and
// nobody can walk run ids to read other repositories' plans.
package runlog

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// URL returns the link to a run's log under the server's public URL, or ""
// without a public URL.
func URL(publicURL, secret string, runID int64) string {
	if publicURL == "" || runID == 0 {
		return ""
	}
	return fmt.Sprintf("%s/runs/%d?key=%s", strings.TrimRight(publicURL, "/"), runID, Key(secret, runID))
}

// Key is the run's link key.
func Key(secret string, runID int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("strata run log " + strconv.FormatInt(runID, 10)))
	return hex.EncodeToString(mac.Sum(nil))[:32]
}

// Valid reports whether key opens the run's log.
func Valid(secret string, runID int64, key string) bool {
	return hmac.Equal([]byte(Key(secret, runID)), []byte(key))
}
