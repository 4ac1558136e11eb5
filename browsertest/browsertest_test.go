package browsertest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// A page whose inline script the Content-Security-Policy refuses, one whose
// script throws, one that logs an error and one whose stylesheet is missing
// are each a problem; a clean page under the same policy, and a page that
// comes with an error status, are not.
func TestTabRecordsWhatWentWrong(t *testing.T) {
	mux := http.NewServeMux()
	page := func(path, body string, status int) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`<!doctype html><html><head><link rel="icon" href="data:,">` + body + `</head><body><p id="ok">ok</p></body></html>`))
		})
	}
	page("/clean", `<script src="/static/fine.js"></script>`, http.StatusOK)
	page("/refused", ``, http.StatusForbidden)
	page("/inline", `<script>document.title = "ran"</script>`, http.StatusOK)
	page("/throws", `<script src="/static/throws.js"></script>`, http.StatusOK)
	page("/logs", `<script src="/static/logs.js"></script>`, http.StatusOK)
	page("/nostyle", `<link rel="stylesheet" href="/static/missing.css">`, http.StatusOK)
	js := map[string]string{"fine.js": `document.title = "fine";`, "throws.js": `null.x();`, "logs.js": `console.error("broken", 42);`}
	mux.HandleFunc("GET /static/{name}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := js[r.PathValue("name")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write([]byte(body))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tab := Start(t).NewTab()
	for _, c := range []struct{ path, want string }{
		{"/clean", ""},
		{"/refused", ""},
		{"/inline", "Content Security Policy"},
		{"/throws", "uncaught exception"},
		{"/logs", `console.error: "broken" 42`},
		{"/nostyle", "missing.css"},
	} {
		if err := chromedp.Do(tab.Context(), chromedp.Navigate(srv.URL+c.path), chromedp.WaitVisible(chromedp.ID("ok"))); err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		// A round trip after the load: the events of the load came before its answer.
		if _, err := chromedp.Run(tab.Context(), chromedp.Evaluate[int]("1")); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(tab.fresh(), "\n")
		switch {
		case c.want == "" && got != "":
			t.Errorf("%s: problems %q, want none", c.path, got)
		case c.want != "" && !strings.Contains(got, c.want):
			t.Errorf("%s: problems %q, want one with %q", c.path, got, c.want)
		}
	}
}
