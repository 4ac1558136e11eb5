package app

import "html/template"

// The setup flow's pages. None of them ever carries the App's key or
// secrets: those go from GitHub's answer straight into the data dir.

var setupPage = template.Must(template.New("setup").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Set up Strata</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Set up Strata</h1>
<p>Strata has no GitHub App yet. Register one on {{.Web}}: GitHub creates it with the
permissions and events Strata needs, then sends you back here.</p>
<form action="{{.Action}}" method="post">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<p><label>Organization (empty for your personal account): <input name="org" id="org"></label></p>
<button type="submit" onclick="var o=document.getElementById('org').value; if(o){this.form.action={{.OrgAction}}.replace('ORG', encodeURIComponent(o));}">Create the GitHub App</button>
</form>
</body></html>`))

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Strata is registered</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Strata is registered as {{.Slug}}</h1>
<p>Its credentials are stored in the server's data directory. Next,
<a href="{{.Install}}">install the App</a> on the repositories Strata should work on.</p>
</body></html>`))

// The refusals say what to do; they name no token, state or code.
const (
	needToken = "This page opens only through the setup URL that strata serve printed in its log " +
		"(it carries a one-time token, /setup?token=...). Open that URL; restarting the server prints a new one."
	notThisBrowser = "This registration did not start from the setup page in this browser. " +
		"Open the setup URL from the server's log in this browser and start again."
	noCode = "GitHub's redirect lacks the registration code: open the setup URL from the server's log and start again."
)
