package web

import (
	"net/http"
	"net/url"
)

// crossOrigin refuses a state-changing request (a POST: logout, Unlock,
// Release) that a browser says comes from another origin, whatever it
// carries: the browser's Sec-Fetch-Site, or else its Origin against the
// Host, as net/http's CrossOriginProtection reads them. It stands before
// the CSRF token, not instead of it: the token fails where the browser
// sends neither header, this where a token leaked (a page's HTML in a
// cache, a proxy's log). The public URL's origin is Strata's own even when
// a proxy in front changes the Host.
func crossOrigin(publicURL string) *http.CrossOriginProtection {
	c := http.NewCrossOriginProtection()
	if u, err := url.Parse(publicURL); err == nil && u.Scheme != "" && u.Host != "" {
		// A scheme and a host are an origin: AddTrustedOrigin cannot fail.
		_ = c.AddTrustedOrigin(u.Scheme + "://" + u.Host)
	}
	return c
}

// refuseCrossOrigin answers a request crossOrigin refused.
func (u *UI) refuseCrossOrigin(w http.ResponseWriter, r *http.Request, err error) {
	u.opts.Log.Info().Err(err).Str("method", r.Method).Str("path", r.URL.Path).
		Str("origin", r.Header.Get("Origin")).Msg("web UI: refused a request from another site")
	u.fail(w, nil, http.StatusForbidden, "This form was sent from another site, so Strata did nothing. Use the buttons on Strata's own pages.")
}
