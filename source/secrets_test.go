package source

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// token is what codeload puts in a private repository's tarball link.
const token = "AAAB3NzaC1yc2EAAAADAQABAAACAQ"

// linkArchiver hands out a fixed tarball link, or fails with err.
type linkArchiver struct {
	link string
	err  error
}

func (a linkArchiver) ArchiveURL(context.Context, string, string, string) (string, error) {
	return a.link, a.err
}

// A download that fails in transport (the connection drops, nobody
// listens, the link does not parse, the Archiver's client fails) -> the
// error, which the plan check shows as is, names the host and path but
// not the token in the link's query or user info.
func TestDownloadErrorsCarryNoToken(t *testing.T) {
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer drop.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	for name, a := range map[string]linkArchiver{
		"connection dropped": {link: drop.URL + "/acme/infra/legacy.tar.gz/" + testSHA + "?token=" + token},
		"nobody listens":     {link: strings.Replace(closed.URL, "http://", "http://x-access-token:"+token+"@", 1) + "/tarball"},
		"does not parse":     {link: "http://codeload.example/%zz?token=" + token},
		"archiver failed": {err: fmt.Errorf("get tarball link: %w", &url.Error{Op: "Get",
			URL: "https://codeload.example/acme/infra/legacy.tar.gz/" + testSHA + "?token=" + token, Err: context.DeadlineExceeded})},
	} {
		f := newFetcher(t, Options{})
		_, _, err := f.Fetch(t.Context(), a, "acme", "infra", testSHA)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
		if !strings.Contains(err.Error(), "acme/infra@"+testSHA) {
			t.Errorf("%s: the error does not say what was fetched: %v", name, err)
		}
	}
}
