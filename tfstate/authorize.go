package tfstate

import (
	"net/http"

	"strata.dev/strata/store"
)

// Operations of Terraform's http backend.
const (
	opGet    = "GET"    // read the state
	opPost   = "POST"   // write a new state
	opLock   = "LOCK"   // take the state lock
	opUnlock = "UNLOCK" // release it
)

// verdict is what authorize decided: the HTTP status to answer (200 lets
// the request through) and why, for the server's log.
type verdict struct {
	Status int
	Why    string
}

var allowed = verdict{Status: http.StatusOK}

// authorize decides whether a request with a credential may do op on key.
// cred is nil when the token is unknown (never issued, or revoked); live is
// whether its run still runs and holds the layer's slot. A credential
// reaches its own state only (repository, layer and workspace), for its
// run only, and only a write credential (an apply's) may POST.
func authorize(cred *store.StateCredential, live bool, op string, key store.StateKey) verdict {
	switch {
	case cred == nil:
		return verdict{http.StatusUnauthorized, "unknown or revoked credential"}
	case !live:
		return verdict{http.StatusForbidden, "the credential's run no longer runs or holds the layer"}
	case cred.Key != key:
		return verdict{http.StatusForbidden, "the credential is for another state"}
	}
	switch op {
	case opGet, opLock, opUnlock:
		return allowed
	case opPost:
		if cred.Mode == store.StateWrite {
			return allowed
		}
		return verdict{http.StatusForbidden, "a plan's credential may not write the state"}
	}
	return verdict{http.StatusMethodNotAllowed, "not an operation of the http backend"}
}
