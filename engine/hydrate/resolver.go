package hydrate

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// RegistryResolver resolves tags to digests against OCI registries.
type RegistryResolver struct {
	keychain  authn.Keychain
	transport http.RoundTripper
	nameOpts  []name.Option
}

// ResolverOption configures a RegistryResolver.
type ResolverOption func(*RegistryResolver)

// WithInsecure lets references use plain HTTP (and skips nothing else): for
// local and test registries.
func WithInsecure() ResolverOption {
	return func(r *RegistryResolver) { r.nameOpts = append(r.nameOpts, name.Insecure) }
}

// WithKeychain sets where registry credentials come from. The default is
// authn.DefaultKeychain (the Docker config, anonymous when there is none).
func WithKeychain(k authn.Keychain) ResolverOption {
	return func(r *RegistryResolver) { r.keychain = k }
}

// WithTransport sets the HTTP transport used to reach registries.
func WithTransport(t http.RoundTripper) ResolverOption {
	return func(r *RegistryResolver) { r.transport = t }
}

// NewRegistryResolver returns a Resolver that asks the image's registry.
func NewRegistryResolver(opts ...ResolverOption) *RegistryResolver {
	r := &RegistryResolver{keychain: authn.DefaultKeychain, transport: remote.DefaultTransport}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Digest returns the digest ref (name:tag) points at now. Like crane digest,
// it asks with HEAD and falls back to GET for registries that do not send
// Docker-Content-Digest on HEAD.
func (r *RegistryResolver) Digest(ctx context.Context, ref string) (string, error) {
	tag, err := name.NewTag(ref, r.nameOpts...)
	if err != nil {
		return "", fmt.Errorf("image reference %q: %w", ref, err)
	}
	opts := []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(r.keychain),
		remote.WithTransport(r.transport),
	}
	desc, err := remote.Head(tag, opts...)
	if err == nil {
		return desc.Digest.String(), nil
	}
	full, getErr := remote.Get(tag, opts...)
	if getErr != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, getErr)
	}
	return full.Digest.String(), nil
}

var _ Resolver = (*RegistryResolver)(nil)

// RepinImages re-resolves pinned images and returns those whose tag now points
// at another digest, with Digest set to the new one, in the order given. An
// image that fails to resolve is reported in err without stopping the others.
func RepinImages(ctx context.Context, pinned []PinnedImage, r Resolver) (moved []PinnedImage, err error) {
	var errs []error
	for _, p := range pinned {
		d, rerr := r.Digest(ctx, p.Name+":"+p.Tag)
		if rerr != nil {
			errs = append(errs, rerr)
			continue
		}
		if d != p.Digest {
			moved = append(moved, PinnedImage{Name: p.Name, Tag: p.Tag, Digest: d})
		}
	}
	return moved, errors.Join(errs...)
}
