package hydrate

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pushRandom pushes a new random image to ref and returns its digest.
func pushRandom(t *testing.T, ref string) v1.Hash {
	t.Helper()
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img); err != nil {
		t.Fatal(err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPinDigestThenRetagMovesTheImage(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	image := u.Host + "/acme/api"
	first := pushRandom(t, image+":"+commit)

	repo := map[string]string{}
	for k, v := range appRepo {
		repo[k] = strings.ReplaceAll(v, "ghcr.io/acme/api", image)
	}
	in := devInput(writeRepo(t, repo))
	in.Images = []ImageRule{{Name: image, Tag: TagSourceCommit, Pin: PinDigest}}
	in.Resolver = NewRegistryResolver(WithInsecure())
	ctx := context.Background()

	res, err := Hydrate(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if deploy := string(res.Files["deployment_dev_api.yaml"]); !strings.Contains(deploy, "image: "+image+"@"+first.String()) {
		t.Fatalf("image not pinned to %s:\n%s", first, deploy)
	}
	want := PinnedImage{Name: image, Tag: commit, Digest: first.String()}
	if len(res.Pinned) != 1 || res.Pinned[0] != want {
		t.Fatalf("pinned = %+v, want %+v", res.Pinned, want)
	}
	state, err := ParseSyncState(res.Files[SyncStateFile])
	if err != nil || len(state.Pinned) != 1 || state.Pinned[0] != want {
		t.Fatalf("sync state pinned = %+v (%v)", state.Pinned, err)
	}

	moved, err := RepinImages(ctx, state.Pinned, in.Resolver)
	if err != nil || len(moved) != 0 {
		t.Fatalf("before retag: moved = %+v, err = %v", moved, err)
	}

	second := pushRandom(t, image+":"+commit)
	moved, err = RepinImages(ctx, state.Pinned, in.Resolver)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0] != (PinnedImage{Name: image, Tag: commit, Digest: second.String()}) {
		t.Fatalf("after retag: moved = %+v, want the new digest %s", moved, second)
	}
}

func TestResolveUnknownTagFails(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	r := NewRegistryResolver(WithInsecure())
	if _, err := r.Digest(context.Background(), u.Host+"/acme/none:v1"); err == nil {
		t.Fatal("resolved a tag that does not exist")
	}
	_, err := RepinImages(context.Background(), []PinnedImage{{Name: u.Host + "/acme/none", Tag: "v1", Digest: "sha256:00"}}, r)
	if err == nil {
		t.Fatal("RepinImages hid a failed look-up")
	}
}
