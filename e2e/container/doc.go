// Package container tests Strata's image (deploy/Dockerfile) from outside,
// as an operator meets it: built by scripts/image, run by Podman as its
// non-root user with a read-only root file system, serving the fake GitHub
// (githubtest) on the host's loopback, and planning and applying real
// Terraform and OpenTofu layers sandboxed. The image is named by
// STRATA_IMAGE; scripts/test builds it and sets it.
package container
