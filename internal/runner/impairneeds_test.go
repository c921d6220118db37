package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/cpuset"
	"github.com/cnibench/cnibench/internal/datapath/catalog"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/knob"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/results"
	"github.com/cnibench/cnibench/internal/study"
	"github.com/cnibench/cnibench/internal/workload/registry"
)

// A study's impairments need netem (and ifb for ingress), once, named;
// none alone needs nothing.
func TestImpairmentNeeds(t *testing.T) {
	s := &study.Study{}
	s.Spec.Datapaths = []study.Datapath{{Name: "flannel-vxlan"}, {Name: "flannel-udp"}}
	s.Spec.ImpairAt = study.ImpairAt{Where: study.WhereClientTunnel, Direction: study.DirEgress}
	s.Spec.Impairments = []study.Impairment{{Name: "none"}}
	if n := impairmentNeeds(s); len(n) != 0 {
		t.Errorf("none alone needs %v", n)
	}
	// A study's own impairment of zeros (a sweep's 0% step) is none too.
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-0", Fields: map[string]string{"loss": "0%"}})
	if n := impairmentNeeds(s); len(n) != 0 {
		t.Errorf("none and loss 0%% need %v", n)
	}
	s.Spec.Impairments = append(s.Spec.Impairments, study.Impairment{Name: "loss-low"}, study.Impairment{Name: "delay-low"})
	n := impairmentNeeds(s)
	if len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem}) ||
		n[0].What != "impairments loss-low and 1 more at client-tunnel egress" || !slices.Equal(n[0].Of, []string{"flannel-vxlan", "flannel-udp"}) {
		t.Errorf("egress: %+v", n)
	}
	s.Spec.ImpairAt.Direction = study.DirIngress
	if n := impairmentNeeds(s); len(n) != 1 || !slices.Equal(n[0].Features, []string{probe.Netem, probe.IFB}) {
		t.Errorf("ingress: %+v", n)
	}
}

// A refusal for want of netem says how to run without impairments: the
// study's profiles that have none (flannel-backends' quick-none), then
// the override any study takes.
func TestImpairmentNeedsSayHowToRunWithout(t *testing.T) {
	s, err := study.Resolve("flannel-backends", study.Options{Profile: "quick"}, study.Catalog{Datapaths: catalog.Names(), Tools: registry.Tools()})
	if err != nil {
		t.Fatal(err)
	}
	n := impairmentNeeds(s)
	if len(n) != 1 || n[0].Without != "--profile quick-none, or --set impairments=[none]" {
		t.Fatalf("without: %+v", n)
	}
	msg := n[0].Refusal("", errors.New("kernel feature netem is not available")).Error()
	if !strings.HasPrefix(msg, "spec.impairments[1]: impairments delay-low and 3 more at client-tunnel egress of flannel-vxlan, flannel-udp: kernel") ||
		!strings.HasSuffix(msg, "netem is not available (to run without: --profile quick-none, or --set impairments=[none])") {
		t.Errorf("refusal: %s", msg)
	}
	s.Profiles = nil
	if w := impairmentNeeds(s)[0].Without; w != "--set impairments=[none]" {
		t.Errorf("study without such a profile: %q", w)
	}
}

// A datapath that cannot take the impairments where spec.impairAt puts
// them is refused at its line before the engine probes anything: every
// impaired trial of it failed one by one. Cells spec.only leaves out,
// and impairments that change nothing, do not count.
func TestImpairPlacesRefusedAtPreflight(t *testing.T) {
	const tail = "  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n"
	for _, tc := range []struct{ name, spec, want string }{
		{"no tunnel", "  datapaths: [flannel-vxlan, bridge]\n  impairments: [none, loss-low]\n" + tail,
			"s.yaml:5: spec.datapaths[1]: datapath bridge has no tunnel device for the impairments at spec.impairAt.where client-tunnel: "},
		{"server tunnel", "  datapaths: [macvlan]\n  impairments: [delay-low]\n  impairAt: {where: server-tunnel}\n" + tail,
			"s.yaml:5: spec.datapaths[0]: datapath macvlan has no tunnel device for the impairments at spec.impairAt.where server-tunnel: " +
				"set impairAt.where to underlay with direction: ingress (through an ifb device: needs the ifb module), for the same server->client traffic, or leave"},
		{"no tunnel, veths", "  datapaths: [bridge]\n  impairments: [delay-low]\n" + tail,
			"s.yaml:5: spec.datapaths[0]: datapath bridge has no tunnel device for the impairments at spec.impairAt.where client-tunnel: " +
				"set impairAt.where to underlay, or client-pods with direction: ingress (through an ifb device: needs the ifb module), for the same client->server traffic, or leave"},
		// netem on the client pods' veths' egress acts on what goes into
		// the pods: the advice keeps the traffic the study impaired.
		{"no tunnel, ingress", "  datapaths: [bridge]\n  impairments: [delay-low]\n  impairAt: {direction: ingress}\n" + tail,
			"s.yaml:5: spec.datapaths[0]: datapath bridge has no tunnel device for the impairments at spec.impairAt.where client-tunnel: " +
				"set impairAt.where to underlay, or client-pods with direction: egress, for the same server->client traffic, or leave"},
		{"macvlan pods", "  datapaths: [macvlan]\n  impairments: [loss-low]\n  impairAt: {where: client-pods}\n" + tail,
			"s.yaml:5: spec.datapaths[0]: datapath macvlan has no host-side pod devices for the impairments at spec.impairAt.where client-pods (its pods' eth0 is a macvlan child"},
		{"host pods", "  datapaths: [host]\n  impairments: [loss-low]\n  impairAt: {where: client-pods}\n" + tail,
			"s.yaml:5: spec.datapaths[0]: datapath host has no host-side pod devices for the impairments at spec.impairAt.where client-pods (its pods use the node's network)"},
		{"ipvlan pods", "  datapaths: [bridge, ipvlan]\n  impairments: [loss-low]\n  impairAt: {where: client-pods}\n" + tail,
			"s.yaml:5: spec.datapaths[1]: datapath ipvlan has no host-side pod devices for the impairments at spec.impairAt.where client-pods (its pods' eth0 is an ipvlan child"},
		{"fits", "  datapaths: [flannel-vxlan, bridge]\n  impairments: [loss-low]\n  impairAt: {where: underlay}\n" + tail, ""},
		{"only none", "  datapaths: [bridge]\n  impairments: [none, {name: l0, loss: 0%}]\n" + tail, ""},
		{"left out", "  datapaths: [flannel-vxlan, bridge]\n  impairments: [none, loss-low]\n  only:\n    - {datapath: flannel-vxlan}\n    - {datapath: bridge, impairment: none}\n" + tail, ""},
	} {
		s := parseSpec(t, tc.spec)
		probed := false
		_, err := preflight(context.Background(), localStub{stubEngine{machine: cpuset.Range(2)}, &probed}, s)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !IsPreflight(err) || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: %v\nwant %s...", tc.name, err, tc.want)
		case tc.want != "" && probed:
			t.Errorf("%s: the engine probed before the study was refused", tc.name)
		}
	}
}

// On a cluster the CNI decides: its first cluster without the tunnel
// the study impairs refuses the run before any trial.
func TestCheckImpairPlaceOnCluster(t *testing.T) {
	s := parseSpec(t, "  datapaths: [flannel-vxlan]\n  impairments: [loss-low]\n  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n")
	d := s.Spec.Datapaths[0]
	err := checkImpairPlace(s, d, tunnelCluster{client: false, server: true})
	if err == nil || !strings.Contains(err.Error(), "datapath flannel-vxlan has no tunnel device for the impairments at spec.impairAt.where client-tunnel") {
		t.Errorf("client without tunnel: %v", err)
	}
	if err := checkImpairPlace(s, d, tunnelCluster{client: true}); err != nil {
		t.Errorf("client with tunnel: %v", err)
	}
	s.Spec.ImpairAt.Where = study.WhereServerTunnel
	if err := checkImpairPlace(s, d, tunnelCluster{client: true}); err == nil {
		t.Error("server without tunnel: no error")
	}
	s.Spec.Impairments = []study.Impairment{{Name: "none"}}
	if err := checkImpairPlace(s, d, tunnelCluster{}); err != nil {
		t.Errorf("none needs no tunnel: %v", err)
	}
}

// tunnelCluster is a cluster whose nodes have a tunnel device or not.
type tunnelCluster struct {
	engine.Cluster
	client, server bool
}

func (c tunnelCluster) Client() engine.Node { return tunnelNode{has: c.client} }
func (c tunnelCluster) Server() engine.Node { return tunnelNode{has: c.server} }

type tunnelNode struct {
	engine.Node
	has bool
}

func (n tunnelNode) Tunnel() (netns.Iface, bool) { return netns.Iface{Name: "t"}, n.has }

// The run's first cluster whose CNI lacks the tunnel the study impairs
// is closed and the run stopped before anything runs on it.
func TestUpDatapathRefusesClusterWithoutTunnel(t *testing.T) {
	s := parseSpec(t, "  datapaths: [flannel-vxlan]\n  impairments: [loss-low]\n  tunings: [baseline]\n  workloads: [{tool: iperf3}]\n")
	c := &closingCluster{tunnelCluster: tunnelCluster{server: true}}
	r := &run{engine: upEngine{c: c}, study: s, plan: &plan{datapaths: map[string]engine.Datapath{}}}
	err := r.upDatapath(context.Background(), s.Spec.Datapaths[0], func(engine.Cluster, *knob.Target) error {
		t.Error("work ran on a cluster without the tunnel")
		return nil
	}, notLost)
	if err == nil || !strings.Contains(err.Error(), "datapath flannel-vxlan has no tunnel device") {
		t.Errorf("upDatapath = %v", err)
	}
	if !c.closed || r.clusters != 0 {
		t.Errorf("cluster closed %v, clusters counted %d; want closed and none", c.closed, r.clusters)
	}
}

type closingCluster struct {
	tunnelCluster
	closed bool
}

func (c *closingCluster) Close() error { c.closed = true; return nil }

// upEngine's Up gives its cluster.
type upEngine struct {
	stubEngine
	c engine.Cluster
}

func (e upEngine) Up(context.Context, engine.Run, engine.Datapath) (engine.Cluster, results.DatapathEnv, error) {
	return e.c, results.DatapathEnv{}, nil
}

// The note on an impairment of the way a workload's data does not go
// (knob.ImpairFlowNotes) is the preflight's: logged when the run starts,
// kept in env.json's notes, which the report shows, and printed by
// --dry-run.
func TestImpairFlowNoteInPreflight(t *testing.T) {
	s := parseSpec(t, "  datapaths: [bridge]\n  tunings: [baseline]\n  impairAt: {where: client-pods}\n  impairments: [loss-low]\n  workloads: [{name: tcp, tool: iperf3}]\n")
	probed := false
	p, err := preflight(context.Background(), localStub{stubEngine{machine: cpuset.Range(2)}, &probed}, s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.notes, func(n string) bool {
		return strings.HasPrefix(n, "impairAt client-pods egress acts on server->client traffic: workload tcp")
	}) {
		t.Errorf("notes %q lack the impairment's direction", p.notes)
	}
}
