package agent

import (
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/netns"
)

// OpImpair answers with the device the netem sits on and the netem as
// installed, its queue limit included (raised under a shaper), which
// the controller records in env.json; before, it said the device alone.
func TestImpairAnswersInstalled(t *testing.T) {
	f := newFakeProc(t)
	f.proc("42", PodEnv+"=ns/cli-0\x00", "podA")
	s := NewServer(Config{Run: "r1", FS: testNode(), Pods: &ProcPods{ProcRoot: f.root}, JournalDir: t.TempDir()})
	s.fs.revertNetem = (&revertCalls{t: t}).revert
	s.fs.applyNetem = func(ns, dev string, _ impair.Spec, _ bool, record func(impair.Prev) error) (impair.Prev, error) {
		p := impair.Prev{Netns: ns, Dev: dev, Kind: "tbf", Child: &impair.Child{Kind: "bfifo", Limit: 3_000_000}, Limit: 2891}
		return p, record(p)
	}
	spec := impair.Spec{Delay: 10 * time.Millisecond}
	var resp Response
	ifc := netns.Iface{Netns: PodNetns("ns", "cli-0"), Name: "eth0"}
	if err := s.handleImpair(Request{Op: OpImpair, Ifaces: []netns.Iface{ifc}, Impair: &ImpairArgs{Spec: spec}}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Value != "eth0" || resp.Netem == nil || resp.Netem.String() != "delay 10ms limit 2891" {
		t.Errorf("answer %q, netem %v; want eth0 with delay 10ms limit 2891", resp.Value, resp.Netem)
	}
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
}
