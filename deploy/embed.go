// Package deploy holds what runs Strata: the GitHub App manifest, the
// container image, the Helm chart and plain Kubernetes manifests.
package deploy

import _ "embed"

// AppManifest is the GitHub App manifest (permissions and events) that the
// setup page sends to GitHub; hook_attributes and redirect_url are added for
// the server's public URL.
//
//go:embed app-manifest.json
var AppManifest []byte
