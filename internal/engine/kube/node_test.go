package kube

import (
	"context"
	"strings"
	"testing"

	"github.com/cnibench/cnibench/internal/engine"
)

// TestHostVethsSkipPodsWithoutPeer: a pod whose eth0 has no host-side
// peer on the node (an SR-IOV VF, a macvlan child) contributes no
// device, as on the local engine, and a tuning or impairment of the
// pods' host-side devices goes on no other device of the node; a
// pod's veth is still found. The agent matched a VF (iflink 3, its own
// ifindex) to docker0 and a macvlan (iflink 2) to the uplink.
func TestHostVethsSkipPodsWithoutPeer(t *testing.T) {
	fs := newMemFS()
	for _, d := range []struct{ dev, idx, link string }{{"ens3", "2", "2"}, {"docker0", "3", "3"}, {"veth0", "9", "3"}} {
		fs.set("", "sysfs", "class/net/"+d.dev+"/ifindex", d.idx)
		fs.set("", "sysfs", "class/net/"+d.dev+"/iflink", d.link)
	}
	for _, p := range []struct{ pod, idx, link string }{{"srv", "3", "9"}, {"vf", "3", "3"}, {"mv", "5", "2"}} {
		fs.set("ns-ns/"+p.pod, "sysfs", "class/net/eth0/ifindex", p.idx)
		fs.set("ns-ns/"+p.pod, "sysfs", "class/net/eth0/iflink", p.link)
	}
	fx := &fakeExec{fs: fs, dir: t.TempDir()}
	n := &Node{name: "w1", ns: "ns", agentPod: "agent-a", exec: fx, sess: openSession(fx, DefaultAgentNamespace, "agent-a", "r1")}
	defer n.sess.close(context.Background())
	pods := []engine.Pod{&Pod{name: "vf"}, &Pod{name: "srv"}, &Pod{name: "mv"}}
	got, err := n.HostVeths(pods)
	if err != nil || len(got) != 1 || got[0].Name != "veth0" {
		t.Errorf("host veths %v, %v; want [veth0]", got, err)
	}
	// Any other failure still fails: a pod the agent cannot find is not
	// a pod without a peer.
	_, err = n.HostVeths([]engine.Pod{&Pod{name: "gone"}})
	if err == nil || !strings.Contains(err.Error(), "pod gone") {
		t.Errorf("host veths of a pod with no device: %v; want an error naming it", err)
	}
}
