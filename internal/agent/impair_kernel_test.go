package agent

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/kerneltest"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/probe"
	"github.com/cnibench/cnibench/internal/tune"
)

// onePod resolves the pod "cnibench/p" to a namespace.
type onePod string

func (o onePod) Netns(string) (string, error) { return string(o), nil }

// podWithVeth makes a throw-away namespace holding an up veth pair.
func podWithVeth(t *testing.T) string {
	t.Helper()
	ns := scratchNS(t, "imp")
	h, err := netns.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "v0"}, PeerName: "v1"}
	if err := h.LinkAdd(v); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"v0", "v1"} {
		l, err := h.LinkByName(n)
		if err == nil {
			err = h.LinkSetUp(l)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return ns
}

func hasNetem(t *testing.T, ns string) bool {
	t.Helper()
	_, err := impair.ReadBack(ns, "v0")
	return err == nil
}

// The kube engine's impairments, on the node: the agent installs netem
// with the journal written first, reads its counters, refuses a second
// netem on the same device, puts the qdisc back on request and at the
// session's end, and a dead session's netem is put back by replay.
func TestKernelAgentImpair(t *testing.T) {
	kerneltest.RequireKernel(t, probe.Veth, probe.Netem)
	ns := podWithVeth(t)
	dir := t.TempDir()
	cfg := Config{Run: "r1", FS: tune.LocalFS{}, Pods: onePod(ns), JournalDir: dir}
	pod := PodNetns("cnibench", "p")
	dev := []netns.Iface{{Netns: pod, Name: "v0"}}
	spec := impair.Spec{Loss: 10}
	call := func(s *Server, req Request) Response {
		req.Run = "r1"
		return s.Handle(req)
	}

	s := NewServer(cfg)
	r := call(s, Request{Op: OpImpair, Ifaces: dev, Impair: &ImpairArgs{Spec: spec}})
	if r.Error != "" || r.Value != "v0" {
		t.Fatalf("impair: %+v", r)
	}
	got, err := impair.ReadBack(ns, "v0")
	if err != nil || !spec.Matches(got) {
		t.Errorf("read back %+v (%v), want %+v", got, err, spec)
	}
	if r := call(s, Request{Op: OpImpair, Ifaces: dev, Impair: &ImpairArgs{Spec: spec}}); !strings.Contains(r.Error, "already impairs") {
		t.Errorf("second impair of v0: %+v", r)
	}
	if r := call(s, Request{Op: OpQdiscStats, Ifaces: dev}); r.Error != "" || len(r.Qdiscs) != 1 {
		t.Errorf("qdisc stats: %+v", r)
	}
	if r := call(s, Request{Op: OpUnimpair, Ifaces: dev}); r.Error != "" || hasNetem(t, ns) {
		t.Errorf("unimpair: %+v, netem still there: %v", r, hasNetem(t, ns))
	}
	// A session is one process on a node; the next one here reuses the
	// journal's name and changes the node too, so this one ends first:
	// it retires its journal and lets go of the node.
	if err := s.end(); err != nil {
		t.Fatal(err)
	}

	// Over the wire, as the kube engine calls it: the session's end puts
	// back what it still impairs.
	s = NewServer(cfg)
	in, w := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error)
	go func() { done <- s.Serve(in, outW); outW.Close() }()
	c := NewClient(w, outR)
	c.SetRun("r1")
	on, installed, err := c.Impair(dev[0], ImpairArgs{Spec: spec})
	if err != nil || on != "v0" {
		t.Fatalf("impair through the client: %q %v", on, err)
	}
	// The netem as installed: the spec, with the queue netem has.
	if want := (impair.Prev{}).Installed(spec); installed.String() != want.String() || installed.Limit != impair.DefaultLimit {
		t.Errorf("installed %s, want %s", installed, want)
	}
	if got, err := impair.ReadBack(ns, "v0"); err != nil || !spec.Matches(got) {
		t.Errorf("read back %+v (%v), want %+v", got, err, spec)
	}
	if st, err := c.QdiscStats(dev); err != nil || len(st) != 1 {
		t.Errorf("qdisc stats through the client: %v %v", st, err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if hasNetem(t, ns) {
		t.Error("netem left after the session ended")
	}

	// A session that died with its netem in place: its journal's qdisc
	// record is replayed by the next agent.
	s = NewServer(cfg)
	if r := call(s, Request{Op: OpImpair, Ifaces: dev, Impair: &ImpairArgs{Spec: spec}}); r.Error != "" {
		t.Fatal(r.Error)
	}
	deadJournalFrom(t, dir)
	// The live session forgets it (as if it were the one that died).
	for k, pq := range s.qdiscs {
		s.j.MarkDone(pq.seq)
		delete(s.qdiscs, k)
	}
	if _, err := Replay(dir, s.fs); err != nil {
		t.Fatal(err)
	}
	if hasNetem(t, ns) {
		t.Error("replay left the dead session's netem")
	}
	s.end()
}

// deadJournalFrom copies the qdisc records of the live journal in dir
// into a journal whose owner is dead.
func deadJournalFrom(t *testing.T, dir string) {
	t.Helper()
	ents, _ := filepath.Glob(filepath.Join(dir, "*"+journal.Ext))
	if len(ents) != 1 {
		t.Fatalf("journals in %s: %v", dir, ents)
	}
	f, err := os.Open(ents[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: "dead_2", PID: 1 << 30, PIDStart: 1, Prefix: "cnb-"}})
	out := append(hdr, '\n')
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"qdisc"`) {
			out = append(append(out, sc.Bytes()...), '\n')
			n++
		}
	}
	if n == 0 {
		t.Fatal("the live journal has no qdisc record")
	}
	if err := os.WriteFile(filepath.Join(dir, "dead_2"+journal.Ext), out, 0o600); err != nil {
		t.Fatal(err)
	}
}
