package agent

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnibench/cnibench/internal/impair"
	"github.com/cnibench/cnibench/internal/journal"
	"github.com/cnibench/cnibench/internal/netns"
	"github.com/cnibench/cnibench/internal/tune"
)

// fileID is the identity statNS gives a fake namespace file.
func fileID(t *testing.T, p string) nsID {
	t.Helper()
	id, err := statNS(p)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// revertCalls records impair.Revert's calls: the namespace each was made
// in, by identity (the reference is only good during the call).
type revertCalls struct {
	t  *testing.T
	in []nsID
}

func (r *revertCalls) revert(p impair.Prev) error {
	r.in = append(r.in, fileID(r.t, netns.Path(p.Netns)))
	return nil
}

// podRecord is what a session journals for eth0 of pod ns/srv-0 impaired
// in the namespace file ns.
func podRecord(t *testing.T, ns string) qdiscRecord {
	id := fileID(t, ns)
	return qdiscRecord{Prev: impair.Prev{Netns: PodNetns("ns", "srv-0"), Dev: "eth0", Default: true},
		NetnsDev: id.dev, NetnsIno: id.ino}
}

// A journaled pod qdisc is put back in the pod's namespace as the pod's
// mark finds it, whatever now holds the PID the netem went in through:
// a reused PID (another namespace, or the node's) is never acted on. No
// marked process: the pod went, its namespace and netem with it, and the
// entry is done untouched. A marked process in another namespace than
// the journaled one is refused, and not taken for gone.
func TestRevertQdiscFollowsThePodNotThePID(t *testing.T) {
	f := newFakeProc(t)
	mark := PodEnv + "=ns/srv-0\x00"
	podA, other := filepath.Join(f.root, "podA"), filepath.Join(f.root, "other")
	rec := podRecord(t, podA)
	calls := &revertCalls{t: t}
	fs := &nodeFS{base: testNode(), pods: &ProcPods{ProcRoot: f.root}, revertNetem: calls.revert}

	// The pod as it was impaired: PID 42.
	f.proc("42", mark, "podA")
	if out, err := fs.revertQdisc(rec); err != nil || out != qdiscReverted {
		t.Fatalf("revert = %v, %v; want reverted", out, err)
	}
	// PID 42 is another pod's process now; the pod lives on as 43.
	f.proc("42", PodEnv+"=ns/other-0\x00", "other")
	f.proc("43", mark, "podA")
	if out, err := fs.revertQdisc(rec); err != nil || out != qdiscReverted {
		t.Fatalf("revert after PID reuse = %v, %v; want reverted", out, err)
	}
	// The pod is gone; its PIDs are the node's processes now.
	f.proc("43", "PATH=/bin\x00", "other")
	if out, err := fs.revertQdisc(rec); err != nil || out != qdiscGone {
		t.Fatalf("revert with the pod gone = %v, %v; want gone", out, err)
	}
	want := fileID(t, podA)
	if len(calls.in) != 2 || calls.in[0] != want || calls.in[1] != want {
		t.Errorf("reverts made in %v; want two, both in the pod's namespace %v (another is %v)", calls.in, want, fileID(t, other))
	}

	// A process of the pod's name in another namespace: a recreated pod,
	// or an impostor.
	calls.in = nil
	f.proc("43", mark, "other")
	out, err := fs.revertQdisc(rec)
	var ce *netnsChangedError
	if !errors.As(err, &ce) || errors.Is(err, tune.ErrGone) || len(calls.in) != 0 {
		t.Fatalf("revert in a changed namespace = %v, %v, reverts %v; want a refusal, nothing done", out, err, calls.in)
	}
	for _, s := range []string{"pod ns/srv-0", "not net:[" + strconv.FormatUint(want.ino, 10) + "]"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("refusal %q does not say %q", err, s)
		}
	}
}

// writeDeadQdiscs writes a dead session's journal holding qdisc records.
func writeDeadQdiscs(t *testing.T, dir string, recs ...qdiscRecord) string {
	t.Helper()
	hdr, _ := json.Marshal(map[string]any{"header": journal.Header{Version: 1, RunID: "dead_1", PID: 1 << 30, PIDStart: 1, Started: time.Now(), Prefix: "cnb-"}})
	b := append(hdr, '\n')
	for i, r := range recs {
		prev, _ := json.Marshal(r)
		l, _ := json.Marshal(map[string]any{"seq": i + 1, "qdisc": journal.Qdisc{Netns: r.Netns, Dev: r.Dev, Prev: prev}})
		b = append(append(b, l...), '\n')
	}
	p := filepath.Join(dir, "dead_1"+journal.Ext)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A dead session's qdisc records, replayed after the agent's restart:
// the pod's netem is put back in the pod's namespace, found by the pod;
// a gone pod's entry is done; an older agent's record, which names the
// namespace by a PID's path only, is left alone and named when that path
// names a namespace (whose, nothing tells), done when it is gone.
func TestReplayQdiscRecords(t *testing.T) {
	f := newFakeProc(t)
	podA := filepath.Join(f.root, "podA")
	f.proc("42", PodEnv+"=ns/srv-0\x00", "podA")
	f.proc("43", "PATH=/bin\x00", "other") // the PID the gone pod had
	gone := podRecord(t, podA)
	gone.Netns = PodNetns("ns", "srv-1")
	old := func(path string) qdiscRecord {
		return qdiscRecord{Prev: impair.Prev{Netns: path, Dev: "eth0", Default: true}}
	}
	dir := t.TempDir()
	path := writeDeadQdiscs(t, dir, podRecord(t, podA), gone, old("/proc/self/ns/net"), old(filepath.Join(f.root, "44/ns/net")))
	calls := &revertCalls{t: t}
	fs := &nodeFS{base: testNode(), pods: &ProcPods{ProcRoot: f.root}, revertNetem: calls.revert}
	sum, err := Replay(dir, fs)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Qdiscs != 1 || sum.Gone != 2 || len(sum.QdiscsLeft) != 1 || !strings.Contains(sum.QdiscsLeft[0], "/proc/self/ns/net") {
		t.Errorf("replay = %+v; want 1 put back, 2 gone, /proc/self/ns/net left", sum)
	}
	if !strings.Contains(sum.String(), "left alone") {
		t.Errorf("summary %q does not say what was left alone", sum)
	}
	if len(calls.in) != 1 || calls.in[0] != fileID(t, podA) {
		t.Errorf("reverts made in %v; want one, in the pod's namespace", calls.in)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("journal kept after a clean replay: %v", err)
	}

	// The pod's name now in another namespace: refused, the journal
	// kept; done once the pod is gone.
	calls.in = nil
	f.proc("42", PodEnv+"=ns/srv-0\x00", "other")
	writeDeadQdiscs(t, dir, podRecord(t, podA))
	if sum, err := Replay(dir, fs); err == nil || !strings.Contains(err.Error(), "net:[") || len(calls.in) != 0 {
		t.Fatalf("replay in a changed namespace = %+v, %v, reverts %v; want a refusal, nothing done", sum, err, calls.in)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("journal not kept after a refusal: %v", err)
	}
	f.proc("42", "PATH=/bin\x00", "other")
	if sum, err := Replay(dir, fs); err != nil || sum.Gone != 1 || len(calls.in) != 0 {
		t.Errorf("replay with the pod gone = %+v, %v, reverts %v; want gone", sum, err, calls.in)
	}
}

// A session journals a pod's netem by the pod and its namespace's
// identity, not by the path it entered the namespace through; its own
// revert finds the pod again, so once the pod's PID is another process's
// nothing is done there.
func TestImpairJournalsThePod(t *testing.T) {
	f := newFakeProc(t)
	podA := filepath.Join(f.root, "podA")
	f.proc("42", PodEnv+"=ns/srv-0\x00", "podA")
	dir := t.TempDir()
	s := NewServer(Config{Run: "r1", FS: testNode(), Pods: &ProcPods{ProcRoot: f.root}, JournalDir: dir})
	calls := &revertCalls{t: t}
	var applied []nsID
	s.fs.revertNetem = calls.revert
	s.fs.applyNetem = func(ns, dev string, _ impair.Spec, _ bool, record func(impair.Prev) error) (impair.Prev, error) {
		applied = append(applied, fileID(t, netns.Path(ns)))
		p := impair.Prev{Netns: ns, Dev: dev, Default: true}
		return p, record(p)
	}
	ifc := netns.Iface{Netns: PodNetns("ns", "srv-0"), Name: "eth0"}
	if _, err := s.impair(ifc, &ImpairArgs{Spec: impair.Spec{Loss: 1}}); err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0] != fileID(t, podA) {
		t.Fatalf("netem applied in %v; want the pod's namespace", applied)
	}
	r, err := journal.ReadReplay(s.j.Path())
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	pend := r.Pending()
	if len(pend) != 1 || pend[0].Qdisc == nil {
		t.Fatalf("journal holds %+v; want one qdisc record", pend)
	}
	rec, err := recordedQdisc(*pend[0].Qdisc)
	if err != nil || pend[0].Qdisc.Netns != ifc.Netns || rec.Netns != ifc.Netns || rec.id() != fileID(t, podA) {
		t.Errorf("journaled %+v (%+v, %v); want pod %s in namespace %v", pend[0].Qdisc, rec, err, ifc.Netns, fileID(t, podA))
	}
	f.proc("42", "PATH=/bin\x00", "other") // the pod went; its PID is the node's
	if err := s.unimpair(ifc); err != nil || len(calls.in) != 0 || len(s.qdiscs) != 0 {
		t.Errorf("unimpair with the pod gone = %v, reverts %v, pending %v; want done, nothing touched", err, calls.in, s.qdiscs)
	}
	if err := s.end(); err != nil {
		t.Fatal(err)
	}
}
