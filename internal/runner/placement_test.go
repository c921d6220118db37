package runner

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/engine"
	"github.com/cnibench/cnibench/internal/study"
)

type namedPod struct{ name string }

func (p namedPod) Name() string { return p.name }
func (p namedPod) Node() string { return p.name[:3] }
func (p namedPod) IP() net.IP   { return nil }
func (p namedPod) Start(context.Context, []string) (engine.Process, error) {
	return nil, nil
}

func pods(prefix string, n int) []engine.Pod {
	var out []engine.Pod
	for i := range n {
		out = append(out, namedPod{prefix + string(rune('0'+i))})
	}
	return out
}

// Every pair carries its server pod's port (BasePort + the pod's index,
// what its Service forwards on a cluster): background servers are pods
// of their own, so their ports are apart from the measured ones.
func TestPlace(t *testing.T) {
	bg := &study.Background{Connections: []int{10}, Pairs: 2, Rate: "10M"}
	for _, tc := range []struct {
		w          study.Workload
		r, need    int
		pairs, bgs string
	}{
		{study.Workload{Name: "tcp"}, 2, 2, "srv0:5201>cli0 srv1:5202>cli1", ""},
		{study.Workload{Name: "intra", Placement: study.PlacementIntraNode}, 2, 4, "srv0:5201>srv2 srv1:5202>srv3", ""},
		{study.Workload{Name: "bg", Background: bg}, 1, 3, "srv0:5201>cli0", "srv1:5202>cli1 srv2:5203>cli2"},
		{study.Workload{Name: "bg-intra", Background: bg, Placement: study.PlacementIntraNode}, 1, 6, "srv0:5201>srv1", "srv2:5203>srv3 srv4:5205>srv5"},
		{study.Workload{Name: "bg0", Background: &study.Background{Connections: []int{0}, Pairs: 2, Rate: "10M"}}, 1, 1, "srv0:5201>cli0", ""},
	} {
		if got := tc.w.PodsPerNode(tc.r); got != tc.need {
			t.Errorf("%s: need %d, want %d", tc.w.Name, got, tc.need)
		}
		pl, err := place(tc.w, tc.r, pods("srv", 6), pods("cli", 6))
		if err != nil {
			t.Fatal(err)
		}
		var got, gotBg string
		for i, p := range pl.pairs {
			if i > 0 {
				got += " "
			}
			got += fmt.Sprintf("%s:%d>%s", p.Server.Name(), p.Port, p.Client.Name())
		}
		for i, p := range pl.background {
			if i > 0 {
				gotBg += " "
			}
			gotBg += fmt.Sprintf("%s:%d>%s", p.Server.Name(), p.Port, p.Client.Name())
		}
		if got != tc.pairs || gotBg != tc.bgs {
			t.Errorf("%s: pairs %q background %q, want %q %q", tc.w.Name, got, gotBg, tc.pairs, tc.bgs)
		}
		if len(pl.servers) != tc.r {
			t.Errorf("%s: %d measured servers", tc.w.Name, len(pl.servers))
		}
	}
	if _, err := place(study.Workload{Name: "x", Placement: study.PlacementIntraNode}, 2, pods("srv", 3), pods("cli", 3)); err == nil {
		t.Error("placed 2 intra-node pairs on 3 pods")
	}
}

// Validation bounds pods per node by study.MaxPodsPerNode because the
// study package cannot import datapath; the two must stay one number, or
// a study would pass validation and fail after the nodes are built.
func TestPodsPerNodeBoundMatchesEngines(t *testing.T) {
	if study.MaxPodsPerNode != datapath.MaxPodsPerNode {
		t.Errorf("study.MaxPodsPerNode %d, datapath.MaxPodsPerNode %d", study.MaxPodsPerNode, datapath.MaxPodsPerNode)
	}
}

// The CPU cost per packet counts the background servers' packets (their
// work is in perf's samples): they are the background pairs' server
// pods, intra-node too, where the clients are server-node pods as well;
// none at 0 connections.
func TestBackgroundServers(t *testing.T) {
	bg := &study.Background{Connections: []int{10}, Pairs: 2, Rate: "10M"}
	for _, tc := range []struct {
		w    study.Workload
		want string
	}{
		{study.Workload{Name: "bg", Background: bg}, "[srv1 srv2]"},
		{study.Workload{Name: "bg-intra", Background: bg, Placement: study.PlacementIntraNode}, "[srv2 srv4]"},
		{study.Workload{Name: "bg0", Background: &study.Background{Connections: []int{0}, Pairs: 2, Rate: "10M"}}, "[]"},
		{study.Workload{Name: "tcp"}, "[]"},
	} {
		pl, err := place(tc.w, 1, pods("srv", 6), pods("cli", 6))
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range pl.backgroundServers() {
			names = append(names, p.Name())
		}
		if got := fmt.Sprint(names); got != tc.want {
			t.Errorf("%s: background servers %s, want %s", tc.w.Name, got, tc.want)
		}
	}
}
