package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cnibench/cnibench/internal/engine/kube/cnidetect"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/study"
)

// cniClues adds to in what tells whether the CNI encapsulates between the
// run's nodes at all (cnidetect's encapAcross): Calico's IP pools (a
// CrossSubnet pool encapsulates only across subnets), Flannel's
// net-conf.json (Backend.DirectRouting) and whether the two nodes share
// a subnet. Clues, not requirements: each read the runner's rights or
// the cluster do not allow leaves detection one clue fewer.
func cniClues(ctx context.Context, cs kubernetes.Interface, place Placement, in *cnidetect.Input) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var err error
	if in.Pools, err = calicoPools(ctx, cs); err != nil {
		in.PoolsUnread = err.Error()
	}
	in.FlannelNetConf = flannelNetConf(ctx, cs, in.DaemonSets)
	if place.Server != nil && place.Client != nil {
		// calico-node records each node's address with the prefix of its
		// interface; felix tells a same-subnet peer by it, and it is the
		// on-link prefix flannel's DirectRouting asks the route table about.
		in.Subnet = cnidetect.CalicoSubnet(place.Server.Annotations[cnidetect.CalicoAddrAnnotation], place.Client.Annotations[cnidetect.CalicoAddrAnnotation])
	}
}

// ipPoolAPIs are where Calico's IPPools are listed, in the order tried:
// crd.projectcalico.org/v1 (the CRDs behind Calico's API server), then
// projectcalico.org/v3 (its native v3 CRDs). The runner's ClusterRole
// grants list on ippools in exactly these groups.
var ipPoolAPIs = []struct{ group, version string }{
	{"crd.projectcalico.org", "v1"},
	{"projectcalico.org", "v3"},
}

// getIPPools returns the IPPool list's JSON from the first of ipPoolAPIs
// that answers. A variable so that a test stands in for the API.
var getIPPools = func(ctx context.Context, cs kubernetes.Interface) ([]byte, error) {
	rc := cs.Discovery().RESTClient()
	if rc == nil || reflect.ValueOf(rc).IsNil() { // a fake clientset has none
		return nil, errors.New("no REST client")
	}
	var b []byte
	var err error
	for _, api := range ipPoolAPIs { // the last one's error is said
		if b, err = rc.Get().AbsPath("/apis/" + api.group + "/" + api.version + "/ippools").DoRaw(ctx); err == nil {
			break
		}
	}
	return b, err
}

// calicoPools are Calico's IP pools' encapsulation settings.
func calicoPools(ctx context.Context, cs kubernetes.Interface) ([]cnidetect.Pool, error) {
	b, err := getIPPools(ctx, cs)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Name string }
			Spec     struct {
				CIDR                string
				IPIPMode, VXLANMode string
				Disabled            bool
			}
		}
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("ippools: %w", err)
	}
	var out []cnidetect.Pool
	for _, p := range list.Items {
		out = append(out, cnidetect.Pool{Name: p.Metadata.Name, CIDR: p.Spec.CIDR, IPIPMode: p.Spec.IPIPMode, VXLANMode: p.Spec.VXLANMode, Disabled: p.Spec.Disabled})
	}
	return out, nil
}

// flannelConfigMaps are the ConfigMaps holding net-conf.json, by the
// DaemonSet whose manifest ships them (kube-flannel.yml, Canal's, RKE2's).
var flannelConfigMaps = map[string]string{
	"kube-flannel-ds": "kube-flannel-cfg", "kube-flannel": "kube-flannel-cfg",
	"canal": "canal-config", "rke2-canal": "rke2-canal-config",
}

// flannelConfigMapNames are the ConfigMaps flannelNetConf reads, sorted:
// the runner's ClusterRole grants get on these names only.
func flannelConfigMapNames() []string {
	var out []string
	for _, n := range flannelConfigMaps {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// daemonSetNames are the DaemonSets the runner lists (daemonSets,
// agentDaemonSets), sorted: CNI detection's and the agent's. The
// runner's ClusterRole grants list on these names only.
func daemonSetNames() []string {
	out := append(cnidetect.DaemonSetNames(), AgentName)
	slices.Sort(out)
	return out
}

// flannelNetConf is Flannel's net-conf.json, from the ConfigMap beside its
// DaemonSet; "" where there is none or it cannot be read.
func flannelNetConf(ctx context.Context, cs kubernetes.Interface, dss []cnidetect.DaemonSet) string {
	for _, d := range dss {
		name, ok := flannelConfigMaps[d.Name]
		if !ok {
			continue
		}
		if cm, err := cs.CoreV1().ConfigMaps(d.Namespace).Get(ctx, name, metav1.GetOptions{}); err == nil && cm.Data["net-conf.json"] != "" {
			return cm.Data["net-conf.json"]
		}
	}
	return ""
}

// routedWarnings are detection's warnings about the measured path: routed
// although the node has the CNI's tunnel device, or perhaps so.
func routedWarnings(cni cnidetect.Result) []string {
	var out []string
	if cni.Routed != "" {
		out = append(out, "the measured path is routed, not tunnelled: "+cni.Routed+
			"; impairments at a tunnel device are refused and tunings go on no tunnel device")
	}
	if cni.Warning != "" {
		out = append(out, cni.Warning)
	}
	return out
}

// refuseTunnelPlace refuses impairments at a tunnel device (client-tunnel,
// the default, or server-tunnel) where detection found the path between
// the run's nodes routed: the netem would go on a device that carries no
// measured packet, and the impaired cells would measure no impairment.
func refuseTunnelPlace(s *study.Study, cni cnidetect.Result) error {
	where := s.Spec.ImpairAt.Where
	if where == "" {
		where = study.WhereClientTunnel
	}
	if (cni.Routed == "" && cni.NoTunnel == "") || (where != study.WhereClientTunnel && where != study.WhereServerTunnel) || !knob.ImpairsCells(s, "") {
		return nil
	}
	if cni.Routed == "" {
		return study.At("spec.impairAt", fmt.Errorf("impairments at %s go on the tunnel device, and no device is taken for it on this cluster: %s; set impairAt.where to %s",
			where, cni.NoTunnel, knob.SameTraffic(s.Spec.ImpairAt, study.WhereUnderlay, study.WhereClientPods)))
	}
	return study.At("spec.impairAt", fmt.Errorf("impairments at %s go on the tunnel device, which carries no measured packet on this cluster: %s; set impairAt.where to %s",
		where, cni.Routed, knob.SameTraffic(s.Spec.ImpairAt, study.WhereUnderlay, study.WhereClientPods)))
}

// routedPath takes the tunnel device off both nodes where detection found
// the measured path routed (cnidetect.Result.Routed): the CNI's device is
// there (felix's vxlan.calico, flannel.1) but carries no packet between
// these nodes, so neither netem nor a tuning goes on it. So too where
// detection takes no device for the tunnel (Result.NoTunnel: a tunl0 up
// beside kube-router's per-peer devices).
func (c *Cluster) routedPath(cni cnidetect.Result) {
	if cni.Routed == "" && cni.NoTunnel == "" {
		return
	}
	for _, n := range []*Node{c.server, c.client} {
		if n != nil {
			n.tunnel, n.hasTunnel = "", false
		}
	}
}
