package setup

import (
	"errors"
	"html/template"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"strata.dev/strata/web"
)

// The setup flow's pages, in the web UI's layout and stylesheet (the UI
// itself exists only once the App does), and the public URL they ask for:
// checked, and warned about when GitHub cannot reach it. None of them ever carries the
// App's key or secrets: those go from GitHub's answer straight into the
// data dir. Nothing inline, no script: the setup's CSP allows only the
// stylesheet, and the layout without a logged-in viewer loads no script.

// chooseForm is the first page: where GitHub will reach this server, and
// which account owns the App.
type chooseForm struct {
	Token      string // carried back to this server only, as the page's URL holds it
	Web        string
	PublicURL  string
	Configured bool // STRATA_PUBLIC_URL is set: not asked
	Warning    *urlWarning
	Org        string
	Error      string
}

// createPage is the second: the manifest form, posted to GitHub.
type createPage struct {
	PublicURL, Owner, Web, Action, Manifest string
	Warning                                 *urlWarning
}

// donePage says how to go on once the App exists.
type donePage struct {
	Slug, Install, PublicURL, Hook, Callback string
	// Login is whether GitHub's answer had the App's OAuth client, which
	// the UI's GitHub login uses.
	Login bool
}

// urlWarning is why GitHub may not reach a public URL, or not safely.
type urlWarning struct {
	Host string
	// Unreachable says what kind of address it is, when GitHub's servers
	// cannot reach it.
	Unreachable string
	// Plain is http: webhooks travel unencrypted.
	Plain      bool
	Configured bool
	Port       string // this server's, for the tunnel commands
}

// warn is the warning for a public URL, nil when there is nothing to say.
func warn(publicURL string, configured bool, port string) *urlWarning {
	u, err := url.Parse(publicURL)
	if err != nil {
		return nil
	}
	w := &urlWarning{Host: u.Hostname(), Unreachable: unreachable(u.Hostname()), Plain: u.Scheme == "http", Configured: configured, Port: port}
	if w.Unreachable == "" && !w.Plain {
		return nil
	}
	return w
}

// unreachable says what kind of host GitHub's servers cannot reach, from
// the name alone (nothing is resolved): empty when it may be reachable.
func unreachable(host string) string {
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		switch {
		case ip.IsLoopback():
			return "a loopback address, which only this machine reaches"
		case ip.IsPrivate():
			return "a private address, which only its own network reaches"
		case ip.IsLinkLocalUnicast():
			return "a link-local address, which only its own network segment reaches"
		case ip.IsUnspecified():
			return "no address at all, only what a server listens on"
		}
		return ""
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		return "this machine's own name, which only this machine reaches"
	case !strings.Contains(name, "."):
		return "a name without a domain, which only its own network resolves"
	}
	return ""
}

// render writes a setup page in the UI's layout, as the UI's pages are
// written: executed first, so that a template that fails is an error page,
// not half a page.
func render(w http.ResponseWriter, status int, t *template.Template, title string, data any) {
	var b strings.Builder
	if err := t.Execute(&b, web.Page{Title: title, Data: data}); err != nil {
		http.Error(w, "the page could not be shown: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// fail answers with a page that says what happened and what to do.
func (s *Pages) fail(w http.ResponseWriter, status int, title, message string) {
	render(w, status, failedTemplate, title, message)
}

// requestURL is this server's address as the request reached it, through
// a proxy or tunnel too. It is only a suggestion that the operator
// confirms, so the forwarding headers may say it.
func requestURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "https" || p == "http" {
		scheme = p
	}
	host := r.Host
	if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
		host = h
	}
	u, err := parsePublicURL(scheme + "://" + host)
	if err != nil {
		return ""
	}
	return u
}

// firstValue is the first of a forwarding header's comma-separated values:
// the one the first proxy saw.
func firstValue(h string) string {
	v, _, _ := strings.Cut(h, ",")
	return strings.ToLower(strings.TrimSpace(v))
}

// localPort is the port this request arrived on, for the tunnel commands
// the warning suggests.
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(a.String()); err == nil {
			return port
		}
	}
	return "8080"
}

// parsePublicURL checks an address for GitHub to reach this server at:
// absolute http or https, a host, no user, query or fragment. It returns it
// without a trailing slash.
func parsePublicURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "", errors.New("it is empty")
	case err != nil:
		return "", errors.New("it is not a URL")
	case u.Scheme != "https" && u.Scheme != "http":
		return "", errors.New("it must start with https:// (or http://)")
	case u.Opaque != "" || u.Hostname() == "":
		return "", errors.New("it names no host")
	case u.User != nil:
		return "", errors.New("it must not hold a user name or password")
	case u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "#"):
		return "", errors.New("it must not have a query (?) or fragment (#)")
	}
	return u.Scheme + "://" + strings.ToLower(u.Host) + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// hostKey is a URL's host and port, without the default ports, to tell
// whether two URLs reach the same server.
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(u.Host), ":443"), ":80")
}

// warningTemplate is the warning about a public URL that the first two
// pages show.
const warningTemplate = `{{define "warning"}}{{with .}}<div class="warning" id="url-warning" role="alert">
  {{with .Unreachable}}<p>GitHub cannot deliver webhooks to <code>{{$.Host}}</code>: it is {{.}}. Use this server's public
  name, or start a tunnel to it and enter the https URL the tunnel prints, for example
  <code>cloudflared tunnel --url http://localhost:{{$.Port}}</code> or <code>ngrok http {{$.Port}}</code>.</p>{{end}}
  {{if .Plain}}<p>With plain http, GitHub's webhooks and your browser's way back travel unencrypted: anyone on the
  way can read them. Prefer https.</p>{{end}}
  {{if .Configured}}<p>This URL is <code>STRATA_PUBLIC_URL</code>: to change it, set it and restart Strata.</p>
  {{else}}<p>Setting <code>STRATA_PUBLIC_URL</code> before starting Strata skips this question.</p>{{end}}
</div>{{end}}{{end}}`

// setupTemplate is a setup page: its content in the UI's layout.
func setupTemplate(content string) *template.Template {
	return template.Must(web.Layout(content + warningTemplate))
}

var chooseTemplate = setupTemplate(`<section class="card narrow">
  <h1>Set up Strata</h1>
  <p>Strata has no GitHub App yet. Register one on {{.Data.Web}} in two steps: say where GitHub will reach this
  server, then confirm on GitHub, which creates the App with the permissions and events Strata needs and
  sends you back here.</p>
  {{with .Data.Error}}<p class="error" id="setup-error" role="alert">{{.}}</p>{{end}}
  <form method="get">
    <input type="hidden" name="token" value="{{.Data.Token}}">
    <input type="hidden" name="step" value="create">
    {{if .Data.Configured}}
    <p>GitHub will reach Strata at <code>{{.Data.PublicURL}}</code> (<code>STRATA_PUBLIC_URL</code>).</p>
    {{else}}
    <label for="public-url">Where will GitHub reach this server?</label>
    <input type="url" id="public-url" name="public_url" value="{{.Data.PublicURL}}" required>
    <p>GitHub delivers webhooks to this address and sends your browser back to it, so this browser continues there
    now; Strata's links in checks and comments start with it.</p>
    {{end}}
    {{template "warning" .Data.Warning}}
    <label for="org">Organization that will own the App</label>
    <input id="org" name="org" value="{{.Data.Org}}" placeholder="empty for your personal account" autocomplete="off">
    <p><button class="primary" id="continue" type="submit">Continue</button></p>
  </form>
</section>`)

var createTemplate = setupTemplate(`<section class="card narrow">
  <h1>Create the GitHub App</h1>
  <p>GitHub will reach Strata at <code id="chosen-url">{{.Data.PublicURL}}</code>.</p>
  {{template "warning" .Data.Warning}}
  <p>On {{.Data.Web}}, GitHub shows the App it will create for {{.Data.Owner}}, with the permissions and events
  Strata needs. Confirm there, and GitHub sends this browser back to Strata.</p>
  <form action="{{.Data.Action}}" method="post">
    <input type="hidden" name="manifest" value="{{.Data.Manifest}}">
    <p><button class="primary" id="create" type="submit">Create the GitHub App</button></p>
  </form>
  <p>To change the address or the account, go back to the previous page.</p>
</section>`)

var doneTemplate = setupTemplate(`<section class="card narrow">
  <h1>Strata is registered as {{.Data.Slug}}</h1>
  <p>GitHub created the App. Its key and secrets are stored in the server's data directory, with the public URL
  <code>{{.Data.PublicURL}}</code>, and Strata now serves as this App.</p>
  <h2>Next: install the App</h2>
  <p>Choose the account and the repositories Strata should work on.</p>
  <p><a class="button primary" id="install" href="{{.Data.Install}}">Install {{.Data.Slug}} on repositories</a></p>
  <p>GitHub then sends their pull requests, comments and pushes to <code>{{.Data.Hook}}</code>. Comment
  <code>/help</code> on a pull request to see the layers, syncs and releases Strata finds there.</p>
  <h2>The web UI</h2>
  <p>Strata's pages are at <a id="ui" href="{{.Data.PublicURL}}/">{{.Data.PublicURL}}/</a>.
  {{if .Data.Login}}You log in with GitHub: the App's OAuth client is configured, with the callback
  <code>{{.Data.Callback}}</code>.{{else}}GitHub's answer had no OAuth client for the App: to log in with GitHub, copy
  the App's client ID and a new client secret from its settings page into <code>STRATA_GITHUB_CLIENT_ID</code> and
  <code>STRATA_GITHUB_CLIENT_SECRET</code>, and restart.{{end}}</p>
</section>`)

// waitingTemplate is the root URL before the App exists: it says where the
// setup link is without being it (the link's token is for whoever reads
// the server's log).
var waitingTemplate = setupTemplate(`<section class="card narrow">
  <h1>Strata is waiting to be set up</h1>
  <p>This server has no GitHub App yet. The page that registers one opens only through the setup link in the
  server's start log, a line like</p>
  <pre id="setup-line">Strata has no GitHub App yet. Open https://HOST/setup?token=... to register one.</pre>
  <p>Find it where Strata's log goes: the terminal that runs <code>strata serve</code>, <code>podman logs</code> or
  <code>docker logs</code> for a container, <code>kubectl logs deploy/strata</code> on Kubernetes. The token is new at
  every start, so a restart prints a new link; treat it like a password.</p>
  <p>An App created by hand instead: set <code>STRATA_GITHUB_APP_ID</code>, <code>STRATA_GITHUB_PRIVATE_KEY_FILE</code> and
  <code>STRATA_GITHUB_WEBHOOK_SECRET</code>, and restart.</p>
</section>`)

var failedTemplate = setupTemplate(`<section class="card narrow">
  <h1>{{.Title}}</h1>
  <p class="error" id="setup-error" role="alert">{{.Data}}</p>
</section>`)

// The refusals and failures say what happened and what to do; they name no
// token, state or code.
const (
	needToken = "This page opens only through the setup URL that strata serve printed in its log " +
		"(it carries a one-time token, /setup?token=...). Open that URL; restarting the server prints a new one."
	notThisBrowser = "This registration did not start from the setup page in this browser. " +
		"Open the setup URL from the server's log in this browser and start again."
	noCode       = "GitHub's redirect lacks the registration code: open the setup URL from the server's log and start again."
	badPublicURL = "Strata cannot use %q as its public URL: %v. Enter the address at which GitHub will reach this server, " +
		"such as https://strata.example.com."
	badOrg            = "%q is not an organization's name on GitHub: letters, digits and hyphens, up to 39."
	gitHubUnreachable = "Strata could not reach GitHub at %s: %v. Check the server's network and proxy (HTTPS_PROXY) and " +
		"STRATA_GITHUB_API_URL, then open the setup URL from the server's log again."
	codeRefused = "GitHub refused the registration code (HTTP %d): it is valid for one hour and one use. " +
		"Open the setup URL from the server's log and start again."
	gitHubFailed = "GitHub at %s failed to convert the registration code (HTTP %d). Open the setup URL from the server's " +
		"log and start again; if it fails again, GitHub may be having an outage."
	gitHubAnsweredWrong = "GitHub at %s answered, but not with the App's credentials: %v. Check STRATA_GITHUB_API_URL, " +
		"then open the setup URL from the server's log and start again."
)
