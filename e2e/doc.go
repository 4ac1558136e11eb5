// Package e2e holds Strata's end-to-end scenarios: a real Strata server
// (apptest) against the fake GitHub (githubtest), with webhooks signed and
// delivered as GitHub delivers them.
package e2e
