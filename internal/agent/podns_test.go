package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cnibench/cnibench/internal/tune"
)

// fakeProc is a stand-in /proc: PID -> environ, and each PID's ns/net a
// link to one of a few files standing in for namespaces (a file's inode
// is what tells them apart, as a namespace's is).
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) fakeProc {
	t.Helper()
	root := t.TempDir()
	for _, ns := range []string{"podA", "other"} {
		if err := os.WriteFile(filepath.Join(root, ns), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return fakeProc{t, root}
}

// proc makes PID with env, in namespace ns ("" for none: an exited
// process whose ns/net cannot be read).
func (f fakeProc) proc(pid, env, ns string) {
	f.t.Helper()
	dir := filepath.Join(f.root, pid)
	os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "ns"), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "environ"), []byte(env), 0o644); err != nil {
		f.t.Fatal(err)
	}
	if ns != "" {
		if err := os.Symlink(filepath.Join(f.root, ns), filepath.Join(dir, "ns/net")); err != nil {
			f.t.Fatal(err)
		}
	}
}

// A process outside the pod that carries the pod's mark and started
// earlier (a lower PID) does not win: marked processes in different
// namespaces are refused, naming them, and the refusal is not "gone"
// (which would read as done).
func TestFindPodPIDRefusesDisagreement(t *testing.T) {
	f := newFakeProc(t)
	mark := PodEnv + "=ns/srv-0\x00"
	f.proc("40", mark, "other") // the spoofer
	f.proc("42", mark, "podA")
	f.proc("43", mark, "podA")
	f.proc("44", mark, "") // exited while the agent looked
	_, err := FindPodPID(f.root, "ns/srv-0")
	if err == nil || errors.Is(err, tune.ErrGone) {
		t.Fatalf("FindPodPID = %v; want a refusal that is not ErrGone", err)
	}
	for _, want := range []string{"pod ns/srv-0", "PID 40", "PIDs 42, 43"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	f.proc("40", "PATH=/bin\x00", "other") // the mark is gone
	if pid, err := FindPodPID(f.root, "ns/srv-0"); err != nil || pid != 42 {
		t.Errorf("FindPodPID = %d, %v; want 42", pid, err)
	}
}

// A cached PID whose process was replaced by one in another namespace
// (PID reuse, or a spoofer that got the PID) is not trusted: the agent
// looks again and refuses the disagreement.
func TestProcPodsRechecksNamespace(t *testing.T) {
	f := newFakeProc(t)
	mark := PodEnv + "=ns/srv-0\x00"
	f.proc("42", mark, "podA")
	f.proc("43", mark, "podA")
	p := &ProcPods{ProcRoot: f.root}
	ref, err := p.Netns("ns/srv-0")
	if err != nil || !strings.HasSuffix(ref, "/42/ns/net") {
		t.Fatalf("Netns = %q, %v; want PID 42's namespace", ref, err)
	}
	f.proc("42", mark, "other")
	if ref, err := p.Netns("ns/srv-0"); err == nil {
		t.Fatalf("Netns = %q after PID 42 moved to another namespace; want a refusal", ref)
	}
}

// Open pins the pod's namespace: the reference it returns stays the
// namespace the marked process was in when it was checked, whatever
// happens to the PID afterwards, until it is released.
func TestProcPodsOpenPins(t *testing.T) {
	f := newFakeProc(t)
	f.proc("42", PodEnv+"=ns/srv-0\x00", "podA")
	p := &ProcPods{ProcRoot: f.root}
	ref, release, err := p.Open("ns/srv-0")
	if err != nil {
		t.Fatal(err)
	}
	f.proc("42", "PATH=/bin\x00", "other") // the PID now belongs to someone else
	var got, want unix.Stat_t
	if err := unix.Stat(ref, &got); err != nil {
		t.Fatal(err)
	}
	unix.Stat(filepath.Join(f.root, "podA"), &want)
	if got.Ino != want.Ino || got.Dev != want.Dev {
		t.Errorf("%s is inode %d, want the pod's %d", ref, got.Ino, want.Ino)
	}
	release()
	if _, err := os.Stat(ref); err == nil && !strings.HasPrefix(ref, f.root) {
		// /proc/self/fd/N may be reused by another open; it must at
		// least no longer be the pod's.
		var now unix.Stat_t
		if unix.Stat(ref, &now) == nil && now.Ino == want.Ino {
			t.Errorf("%s still the pod's namespace after release", ref)
		}
	}
	if _, _, err := p.Open("ns/srv-0"); !errors.Is(err, tune.ErrGone) {
		t.Errorf("Open of a pod without a marked process: %v, want ErrGone", err)
	}
}
