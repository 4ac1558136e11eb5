package web

import (
	"io/fs"
	"net/http"
)

// Static serves the UI's stylesheet and script under /static/: for the
// UI's pages, and for the setup pages, served before the UI exists, which
// look like the rest of it.
func Static() http.Handler {
	static, _ := fs.Sub(staticFS, "static")
	files := http.StripPrefix("/static/", http.FileServerFS(static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
