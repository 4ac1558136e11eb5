package hydrate

import (
	"context"
	"strings"
	"testing"

	"strata.dev/strata/engine/hydrate/hydratetest"
)

func TestPinDigestThenRetagMovesTheImage(t *testing.T) {
	image := hydratetest.Registry(t) + "/acme/api"
	first := hydratetest.PushImage(t, image+":"+commit)

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
	if deploy := string(res.Files["deployment_dev_api.yaml"]); !strings.Contains(deploy, "image: "+image+"@"+first) {
		t.Fatalf("image not pinned to %s:\n%s", first, deploy)
	}
	want := PinnedImage{Name: image, Tag: commit, Digest: first}
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

	second := hydratetest.PushImage(t, image+":"+commit)
	moved, err = RepinImages(ctx, state.Pinned, in.Resolver)
	if err != nil {
		t.Fatal(err)
	}
	if len(moved) != 1 || moved[0] != (PinnedImage{Name: image, Tag: commit, Digest: second}) {
		t.Fatalf("after retag: moved = %+v, want the new digest %s", moved, second)
	}
}

func TestResolveUnknownTagFails(t *testing.T) {
	host := hydratetest.Registry(t)
	r := NewRegistryResolver(WithInsecure())
	if _, err := r.Digest(context.Background(), host+"/acme/none:v1"); err == nil {
		t.Fatal("resolved a tag that does not exist")
	}
	_, err := RepinImages(context.Background(), []PinnedImage{{Name: host + "/acme/none", Tag: "v1", Digest: "sha256:00"}}, r)
	if err == nil {
		t.Fatal("RepinImages hid a failed look-up")
	}
}
