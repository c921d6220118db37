package calicorouted

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/datapath"
	"github.com/cnibench/cnibench/internal/probe"
)

func testNodes(n int) []datapath.Node {
	var out []datapath.Node
	for i := 0; i < n; i++ {
		out = append(out, datapath.Node{
			Name: []string{"server", "client", "third"}[i], Netns: "ns", Index: i,
			Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, byte(i+1)), UnderlayMTU: 1500,
		})
	}
	return out
}

func TestBirdConfMesh(t *testing.T) {
	nodes := testNodes(3)
	for i, want := range []struct {
		block  string
		peers  []string
		passiv []bool
	}{
		{"192.168.0.0/24", []string{"Mesh_198_18_0_2", "Mesh_198_18_0_3"}, []bool{true, true}},
		{"192.168.1.0/24", []string{"Mesh_198_18_0_1", "Mesh_198_18_0_3"}, []bool{false, true}},
		{"192.168.2.0/24", []string{"Mesh_198_18_0_1", "Mesh_198_18_0_2"}, []bool{false, false}},
	} {
		c, err := newBirdConf(nodes[i], nodes)
		if err != nil {
			t.Fatal(err)
		}
		if c.Block.String() != want.block || c.RouterID.String() != nodes[i].UnderlayIP.String() || c.AS != 64512 || c.Pool.String() != "192.168.0.0/16" {
			t.Errorf("node %d: %+v", i, c)
		}
		if len(c.Peers) != len(want.peers) {
			t.Fatalf("node %d: peers %+v, want %v", i, c.Peers, want.peers)
		}
		for j, p := range c.Peers {
			if p.Name != want.peers[j] || p.Passive != want.passiv[j] {
				t.Errorf("node %d peer %d: %+v, want %s passive=%v", i, j, p, want.peers[j], want.passiv[j])
			}
		}
	}
	// Every session has exactly one active end, or it would never come up
	// (both passive) or race (both active).
	for i := range nodes {
		ci, _ := newBirdConf(nodes[i], nodes)
		for _, p := range ci.Peers {
			for j := range nodes {
				if !nodes[j].UnderlayIP.Equal(p.IP) {
					continue
				}
				cj, _ := newBirdConf(nodes[j], nodes)
				for _, q := range cj.Peers {
					if q.IP.Equal(ci.RouterID) && q.Passive == p.Passive {
						t.Errorf("session %s-%s: both ends passive=%v", ci.RouterID, p.IP, p.Passive)
					}
				}
			}
		}
	}
	bad := nodes[1]
	bad.UnderlayIP = net.ParseIP("fd00::2")
	if _, err := newBirdConf(nodes[0], []datapath.Node{nodes[0], bad}); err == nil || !strings.Contains(err.Error(), "not IPv4") {
		t.Errorf("IPv6 peer: %v", err)
	}
}

func TestBirdConfRender(t *testing.T) {
	nodes := testNodes(2)
	c, err := newBirdConf(nodes[0], nodes)
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"router id 198.18.0.1;",
		"route 192.168.0.0/24 blackhole;",
		"if ( net = 192.168.0.0/24 ) then { accept; }",
		"if ( net ~ 192.168.0.0/24 ) then { reject; }",
		"if ( net ~ 192.168.0.0/16 ) then { accept; }",
		"learn off;", "persist off;", "merge paths on;", "metric 0;",
		"local as 64512;",
		"protocol bgp Mesh_198_18_0_2 from bgp_template {\n  neighbor 198.18.0.2 as 64512;\n  source address 198.18.0.1;\n  passive on;",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("configuration lacks %q:\n%s", want, text)
		}
	}
	// The block's aggregation must come before the pool's accept, or the
	// per-pod /32s inside the block would be exported.
	if strings.Index(text, "calico_aggr();") > strings.Index(text, "if ( net ~ 192.168.0.0/16 ) then { accept; }\n  reject;") {
		t.Error("calico_aggr runs after the pool's accept")
	}
	c1, _ := newBirdConf(nodes[1], nodes)
	text1, _ := c1.Render()
	if strings.Contains(text1, "passive on") || !strings.Contains(text1, "neighbor 198.18.0.1 as 64512;") {
		t.Errorf("the higher address must connect actively:\n%s", text1)
	}
}

// TestBirdConfParses has BIRD itself check the generated configuration
// (bird -p parses and exits), for two and three nodes.
func TestBirdConfParses(t *testing.T) {
	bird, err := probe.ToolPath(probe.ToolBird)
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	for _, n := range []int{2, 3} {
		nodes := testNodes(n)
		for _, self := range nodes {
			c, err := newBirdConf(self, nodes)
			if err != nil {
				t.Fatal(err)
			}
			text, err := c.Render()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "bird.conf")
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bird, "-p", "-c", path).CombinedOutput(); err != nil {
				t.Errorf("bird -p rejects the configuration of %s (%d nodes): %v\n%s\n%s", self.Name, n, err, out, text)
			}
		}
	}
}
