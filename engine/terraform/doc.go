// Package terraform is Strata's Terraform engine: it finds a repository's
// layers, plans a layer into a saved plan file, applies exactly that file
// later in a fresh tree, and renders plans as markdown for the PR, the check
// run and the local CLI.
//
// It takes plain inputs (directories, a workspace, var files, a binary) and
// returns plain results; it knows nothing of GitHub or of Strata's store.
// Terraform runs through terraform-exec, and plans are read with
// terraform-json.
package terraform
