package hydrate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/kustomize/api/pkg/util"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// containerLists are the fields whose items carry an image, wherever they
// appear in a resource (pod specs, pod templates, CronJob job templates,
// custom resources that embed a pod spec).
var containerLists = map[string]bool{
	"containers":          true,
	"initContainers":      true,
	"ephemeralContainers": true,
}

// imageFilter applies the sync's image rules to every container image: a new
// tag, then, when pinned, the digest that tag resolves to (name@sha256:...).
type imageFilter struct {
	ctx      context.Context
	rules    []ImageRule
	commit   string
	resolver Resolver

	digests map[string]PinnedImage // by name:tag, so each ref is resolved once
}

var _ kio.Filter = (*imageFilter)(nil)

func (f *imageFilter) Filter(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
	if len(f.rules) == 0 {
		return nodes, nil
	}
	for _, n := range nodes {
		if err := f.walk(n.YNode()); err != nil {
			return nil, fmt.Errorf("%s %s: %w", n.GetKind(), n.GetName(), err)
		}
	}
	return nodes, nil
}

func (f *imageFilter) walk(n *yaml.Node) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			if containerLists[key.Value] && val.Kind == yaml.SequenceNode {
				for _, c := range val.Content {
					if err := f.container(c); err != nil {
						return err
					}
				}
				continue
			}
			if err := f.walk(val); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := f.walk(c); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *imageFilter) container(c *yaml.Node) error {
	if c.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value != "image" || c.Content[i+1].Kind != yaml.ScalarNode {
			continue
		}
		img := c.Content[i+1]
		out, err := f.rewrite(img.Value)
		if err != nil {
			return err
		}
		img.Value = out
		img.Tag = yaml.NodeTagString
		img.Style = 0
	}
	return nil
}

// rewrite applies the first rule naming the image's name, as kustomize's
// images transformer does.
func (f *imageFilter) rewrite(ref string) (string, error) {
	name, tag, digest := util.SplitImageName(ref)
	for _, r := range f.rules {
		if r.Name != name {
			continue
		}
		switch r.Tag {
		case "":
		case TagSourceCommit:
			tag, digest = f.commit, ""
		default:
			tag, digest = r.Tag, ""
		}
		if r.Pin == PinDigest {
			p, err := f.pin(name, tag)
			if err != nil {
				return "", err
			}
			return name + "@" + p.Digest, nil
		}
		return join(name, tag, digest), nil
	}
	return ref, nil
}

func (f *imageFilter) pin(name, tag string) (PinnedImage, error) {
	if tag == "" {
		tag = "latest"
	}
	ref := name + ":" + tag
	if p, ok := f.digests[ref]; ok {
		return p, nil
	}
	if f.resolver == nil {
		return PinnedImage{}, errNoResolver
	}
	d, err := f.resolver.Digest(f.ctx, ref)
	if err != nil {
		return PinnedImage{}, fmt.Errorf("pin %s: %w", ref, err)
	}
	if f.digests == nil {
		f.digests = map[string]PinnedImage{}
	}
	p := PinnedImage{Name: name, Tag: tag, Digest: d}
	f.digests[ref] = p
	return p, nil
}

// pinned lists the images resolved during the build, sorted by name and tag.
func (f *imageFilter) pinned() []PinnedImage {
	out := make([]PinnedImage, 0, len(f.digests))
	for _, ref := range sortedKeys(f.digests) {
		out = append(out, f.digests[ref])
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Tag < out[j].Tag
	})
	return out
}

func join(name, tag, digest string) string {
	var b strings.Builder
	b.WriteString(name)
	if tag != "" {
		b.WriteString(":" + tag)
	}
	if digest != "" {
		b.WriteString("@" + digest)
	}
	return b.String()
}

// annotate sets key: value in the metadata of every resource.
func annotate(key, value string) kio.Filter {
	return kio.FilterFunc(func(nodes []*yaml.RNode) ([]*yaml.RNode, error) {
		for _, n := range nodes {
			if err := n.PipeE(yaml.SetAnnotation(key, value)); err != nil {
				return nil, fmt.Errorf("annotate %s %s: %w", n.GetKind(), n.GetName(), err)
			}
		}
		return nodes, nil
	})
}
