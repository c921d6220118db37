package kube

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnibench/cnibench/internal/engine"
)

var _ engine.ImageResolver = (*Cluster)(nil)

// resolvedImages are the image IDs the ready workload pods' containers
// reported (status imageID), by node: what each node resolved the pods'
// image reference to. env.json's image names a reference only; pinned
// by tag (`kube install --allow-tag`), it may resolve to another image
// on another node, or in another run, which only these tell.
type resolvedImages map[string][]string

// add records the image IDs of a ready pod's containers under its node;
// one not reported yet ("") is left out.
func (r *resolvedImages) add(p *corev1.Pod) {
	for _, s := range p.Status.ContainerStatuses {
		if s.ImageID == "" || slices.Contains((*r)[p.Spec.NodeName], s.ImageID) {
			continue
		}
		if *r == nil {
			*r = resolvedImages{}
		}
		(*r)[p.Spec.NodeName] = append((*r)[p.Spec.NodeName], s.ImageID)
	}
}

// ResolvedImages implements engine.ImageResolver: the image IDs the
// workload pods' containers reported once ready, by node, each node's
// sorted.
func (c *Cluster) ResolvedImages() map[string][]string {
	out := maps.Clone(map[string][]string(c.images))
	for n, ids := range out {
		out[n] = slices.Sorted(slices.Values(ids))
	}
	return out
}
