package app

import "net/http"

// serveStateAPI serves `strata state pull|push` once the server has an App
// (stateapi): before, nobody's token can be checked, and it answers 503.
func (s *Server) serveStateAPI(w http.ResponseWriter, r *http.Request) {
	if api := s.stateAPI.Load(); api != nil {
		api.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "Strata has no GitHub App yet: finish its setup first", http.StatusServiceUnavailable)
}
