package kube

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ErrImageMismatch: --image names another image than the installed
// agent runs.
var ErrImageMismatch = errors.New("image is not the agent's")

// errAgentsDiffer: the two nodes' agents run different images (a
// rollout of the DaemonSet under way, or stuck).
var errAgentsDiffer = errors.New("the agents run different images")

// agentImage is what an agent pod runs: its container's image as the
// DaemonSet names it (ref), and the image the kubelet resolved it to
// (id, its status's imageID: "" until known; a repository digest,
// NAME@sha256:..., where the image was pulled).
type agentImage struct{ node, ref, id string }

func imageOf(node string, p *corev1.Pod) agentImage {
	a := agentImage{node: node}
	for i, c := range p.Spec.Containers {
		if i == 0 || c.Name == "agent" {
			a.ref = c.Image
		}
	}
	for i, s := range p.Status.ContainerStatuses {
		if i == 0 || s.Name == "agent" {
			a.id = s.ImageID
		}
	}
	return a
}

// takeImage settles the workload pods' image against the agents' (the
// pods waitAgents found, by node), before any workload pod exists. The
// tools are checked by asking an agent (checkTools), which can only
// answer for its own image, and the workload pods ran --image (default
// docker.io/cnibench/cnibench:dev) whatever the agent ran: an agent
// installed by digest and a run without --image passed the check, then
// its pods could not pull the default image, or ran other tools than
// those checked. So the agents' image is the workload pods' unless
// --image was given (Config.ImageGiven), and a given one that is not
// theirs is refused (ErrImageMismatch), naming both. c.image is the
// image the tools are checked in.
func (c *Cluster) takeImage(agents map[string]*corev1.Pod) error {
	var first agentImage
	for _, node := range slices.Sorted(maps.Keys(agents)) {
		a := imageOf(node, agents[node])
		switch {
		case a.ref == "": // a pod always names its image; not known, not compared
		case first.ref == "":
			first = a
		case !a.same(first):
			return fmt.Errorf("%w: the agent on node %s runs %s, the one on node %s %s; the workload pods must run the image whose tools the agents checked: "+
				"wait until `kubectl -n %s rollout status daemonset/%s` says the rollout ended",
				errAgentsDiffer, first.node, first.describe(), a.node, a.describe(), c.cfg.AgentNamespace, AgentName)
		}
	}
	if first.ref == "" {
		return nil
	}
	if c.cfg.ImageGiven && !first.matches(c.cfg.Image) {
		hint := ""
		if digestOf(c.cfg.Image) == "" && (digestOf(first.ref) != "" || digestOf(first.id) != "") {
			hint = "; a tag cannot be matched to the agent's digest here: give --image by that digest"
		}
		return fmt.Errorf("%w: --image %s, but the installed agent on node %s runs %s: the agents check the tools of their own image, "+
			"which the workload pods must run; leave --image out to run the agent's image, or have an administrator install the agent "+
			"with %s (`cnibench kube install --image`)%s", ErrImageMismatch, c.cfg.Image, first.node, first.describe(), c.cfg.Image, hint)
	}
	if !c.cfg.ImageGiven {
		c.cfg.Image = first.ref
	}
	c.image = first.ref
	return nil
}

// describe is the image in words: its reference, and what it resolved
// to where that says more.
func (a agentImage) describe() string {
	if a.id == "" || a.id == a.ref {
		return a.ref
	}
	return a.ref + " (image ID " + a.id + ")"
}

// same reports whether two agents run one image: one image ID, or one
// reference that did not resolve to two registry digests (a tag moved
// between the two nodes' pulls). IDs of other forms are not compared:
// two runtimes may write one image's differently.
func (a agentImage) same(b agentImage) bool {
	if a.id != "" && a.id == b.id {
		return true
	}
	if !b.matches(a.ref) {
		return false
	}
	da, db := digestOf(a.id), digestOf(b.id)
	return da == "" || db == "" || da == db
}

// matches reports whether the reference ref names the agent's image: the
// same reference, as the container runtime completes it (docker.io,
// library/, :latest), or the digest the agent's reference or resolved
// image has.
func (a agentImage) matches(ref string) bool {
	if normalizeRef(ref) == normalizeRef(a.ref) {
		return true
	}
	d := digestOf(ref)
	return d != "" && (d == digestOf(a.ref) || d == digestOf(a.id))
}

// digestOf is the digest of a reference NAME[:TAG]@sha256:HEX, or of an
// image ID in that form ("" for none: a bare image ID is the image's
// configuration digest, not its registry digest).
func digestOf(ref string) string {
	_, d, ok := strings.Cut(ref, "@")
	if !ok {
		return ""
	}
	return d
}

// normalizeRef completes an image reference as the container runtimes do:
// the registry docker.io where the first part names none, library/ for
// its one-part names, and the tag latest where neither tag nor digest is
// given. "cnibench/cnibench:dev" is "docker.io/cnibench/cnibench:dev".
func normalizeRef(ref string) string {
	name, digest, hasDigest := strings.Cut(ref, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, tag = name[:i], name[i+1:]
	}
	domain, rest, ok := strings.Cut(name, "/")
	if !ok || !(strings.ContainsAny(domain, ".:") || domain == "localhost") {
		domain, rest = "docker.io", name
	}
	if domain == "index.docker.io" {
		domain = "docker.io"
	}
	if domain == "docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	out := domain + "/" + rest
	if tag == "" && !hasDigest {
		tag = "latest"
	}
	if tag != "" {
		out += ":" + tag
	}
	if hasDigest {
		out += "@" + digest
	}
	return out
}
