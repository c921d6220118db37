package kuberouter

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

func threeNodes() []datapath.Node {
	return []datapath.Node{
		{Name: "server", Index: 0, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, 1)},
		{Name: "client", Index: 1, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, 2)},
		{Name: "third", Index: 2, Underlay: "eth1", UnderlayIP: net.IPv4(198, 18, 0, 3)},
	}
}

// TestBirdConf: each node's BIRD originates its own pod CIDR on
// kube-bridge and peers with every other node by underlay address, in AS
// 64512, from its own address.
func TestBirdConf(t *testing.T) {
	nodes := threeNodes()
	c, err := newBirdConf(nodes[1], nodes)
	if err != nil {
		t.Fatal(err)
	}
	text, err := c.Render()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"router id 198.18.0.2;",
		`route 10.244.1.0/24 via "kube-bridge";`,
		"if ( net ~ 10.244.0.0/16 ) then { accept; }",
		"if ( source = RTS_BGP && net ~ 10.244.0.0/16 ) then { accept; }",
		"local as 64512;",
		"protocol bgp node_198_18_0_1 from node_mesh {\n  neighbor 198.18.0.1 as 64512;\n  source address 198.18.0.2;\n}",
		"protocol bgp node_198_18_0_3 from node_mesh {\n  neighbor 198.18.0.3 as 64512;\n  source address 198.18.0.2;\n}",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("configuration lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "neighbor 198.18.0.2 ") {
		t.Errorf("node peers with itself:\n%s", text)
	}
	if _, err := newBirdConf(datapath.Node{Name: "v6", UnderlayIP: net.ParseIP("2001:db8::1")}, nodes); err == nil {
		t.Error("an IPv6 underlay accepted")
	}
}

// TestBirdConfParses has BIRD itself check every node's generated
// configuration (bird -p parses and exits).
func TestBirdConfParses(t *testing.T) {
	bird, err := probe.ToolPath(probe.ToolBird)
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	nodes := threeNodes()
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
			t.Errorf("bird -p rejects the configuration of %s: %v\n%s\n%s", self.Name, err, out, text)
		}
	}
}
