package soak

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"strata.dev/strata/githubtest"
)

// checkLog is every change of a check run's status that the fake GitHub
// accepted, in the order Strata made them: a proxy in front of the fake
// reads the status and conclusion of each create and update. The fake
// keeps only a check's last state; this says whether a completed check
// was ever reopened or concluded again otherwise (a replica and a retry
// both reporting one run).
type checkLog struct {
	mu     sync.Mutex
	events map[int64][]string // check run id -> "queued", "in_progress", "completed:success", ...
}

var checkWrite = regexp.MustCompile(`^/api/v3/repos/[^/]+/[^/]+/check-runs(?:/(\d+))?$`)

type checkChange struct{ state string }

type checkChangeKey struct{}

// recordChecks starts the proxy; Strata talks to the fake through its URL.
func recordChecks(t *testing.T, gh *githubtest.Server) (string, *checkLog) {
	target, err := url.Parse(gh.URL())
	if err != nil {
		t.Fatal(err)
	}
	cl := &checkLog{events: map[int64][]string{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A killed replica leaves requests cut short; that is the point here.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	proxy.ModifyResponse = func(res *http.Response) error {
		ch, ok := res.Request.Context().Value(checkChangeKey{}).(checkChange)
		if !ok || res.StatusCode/100 != 2 {
			return nil
		}
		m := checkWrite.FindStringSubmatch(res.Request.URL.Path)
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if id == 0 { // a create: the id is in the answer
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				return err
			}
			res.Body = io.NopCloser(bytes.NewReader(body))
			var created struct{ ID int64 }
			if err := json.Unmarshal(body, &created); err != nil {
				return fmt.Errorf("soak: a created check run's answer: %w", err)
			}
			id = created.ID
		}
		cl.mu.Lock()
		cl.events[id] = append(cl.events[id], ch.state)
		cl.mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.Method == http.MethodPost || r.Method == http.MethodPatch) && checkWrite.MatchString(r.URL.Path) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var change struct{ Status, Conclusion string }
			_ = json.Unmarshal(body, &change)
			state := change.Status
			if change.Conclusion != "" {
				state = "completed:" + change.Conclusion
			}
			if state != "" {
				r = r.WithContext(context.WithValue(r.Context(), checkChangeKey{}, checkChange{state}))
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, cl
}

// completions says how a check run was completed: how many updates
// completed it, and what went wrong after the first (reopened, or
// concluded otherwise), "" when nothing did.
func (cl *checkLog) completions(id int64) (n int, wrong string) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	first := ""
	for _, e := range cl.events[id] {
		switch {
		case first == "" && len(e) > 10 && e[:10] == "completed:":
			first, n = e, 1
		case first == "":
		case e == first:
			n++
		default:
			wrong = fmt.Sprintf("%s after %s (%v)", e, first, cl.events[id])
		}
	}
	return n, wrong
}
