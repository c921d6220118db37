package agent

import (
	"os"
	"path/filepath"
	"testing"
)

// OpDaemons lists the named processes in the node's network namespace
// from the node's /proc: another node's kube-proxy (nodes sharing a
// machine and a PID namespace) and other programs are left out.
func TestDaemonsOverProtocol(t *testing.T) {
	proc, nsDir := t.TempDir(), t.TempDir()
	node, other := filepath.Join(nsDir, "node"), filepath.Join(nsDir, "other")
	for _, f := range []string{node, other} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ pid, comm, ns string }{{"7", "kube-proxy", node}, {"8", "kube-proxy", other}, {"9", "containerd", node}} {
		procFile(t, proc, p.pid+"/comm", p.comm+"\n")
		procFile(t, proc, p.pid+"/stat", p.pid+" ("+p.comm+") S 1 1 1 0 -1 0 0 0 0 0 40 2 0 0 20 0 1 0 1 1 1")
		procFile(t, proc, p.pid+"/status", "VmRSS:\t 1024 kB\n")
		if err := os.MkdirAll(filepath.Join(proc, p.pid, "ns"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p.ns, filepath.Join(proc, p.pid, "ns", "net")); err != nil {
			t.Fatal(err)
		}
	}
	s := NewServer(Config{Run: "r", ProcRoot: proc, NodeNetns: node, JournalDir: t.TempDir()})
	r := s.Handle(Request{Run: "r", Op: OpDaemons, Args: []string{"kube-proxy", "flanneld"}})
	if r.Error != "" || len(r.Procs) != 1 || r.Procs[0].PID != 7 || r.Procs[0].Ticks != 42 || r.Procs[0].RSSBytes != 1<<20 {
		t.Errorf("daemons: %+v", r)
	}
}
