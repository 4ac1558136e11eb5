// Package helm installs or upgrades a release from a PR's chart with the
// Helm SDK, runs its test hooks and reports every hook with its logs.
//
// It imports nothing of GitHub or the rest of Strata: the caller fetches the
// tree, builds an action.Configuration for the cluster, calls Test (or
// Uninstall when a PR closes), stores the Report and renders
// Report.Markdown as the check run.
//
// A run is a fixed sequence of named steps, each recorded in the Report:
//
//  1. unlock: a last revision stuck in pending-install, pending-upgrade or
//     pending-rollback is marked failed in storage (helm-controller's unlock);
//  2. install, or upgrade, with wait and the timeout;
//  3. test: action.ReleaseTesting with the name filters;
//  4. remediate a failed upgrade or test: none, rollback or uninstall.
//
// Observation is kept apart from the actions: the storage driver is wrapped
// so Report.Writes, Revision and Status state what was written, even when an
// SDK call returned an error.
//
// Hook logs: the kube client is wrapped (capturingClient) so that the logs
// of a test hook's pods are read as soon as WatchUntilReady returns for that
// hook, before Helm applies the hook-succeeded or hook-failed delete policy.
// `helm test --logs` reads them afterwards and finds them gone.
package helm
