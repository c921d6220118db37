package agent

import (
	"errors"
	"testing"

	"github.com/cnibench/cnibench/internal/tune"
)

const reservedPorts = "/proc/sys/net/ipv4/ip_local_reserved_ports"

// emptyIgnoringFS is a memFS whose ip_local_reserved_ports ignores a
// write of "", as the kernel ignores a zero-length write.
type emptyIgnoringFS struct{ *memFS }

func (f emptyIgnoringFS) Write(ns, fsKind, p, v string) error {
	if p == reservedPorts && v == "" {
		return nil
	}
	return f.memFS.Write(ns, fsKind, p, v)
}

// TestRevertReadsBack: the session's Revert reads a value back after
// writing it; one the kernel did not take stays pending, reported, and
// its journal stays for cleanup.
func TestRevertReadsBack(t *testing.T) {
	mem := testNode()
	mem.vals[key("", "proc", reservedPorts)] = ""
	srv := NewServer(Config{Run: "ports", FS: emptyIgnoringFS{mem}, Pods: fakePods{}, JournalDir: t.TempDir()})
	if err := srv.write("", "proc", reservedPorts, "5201-5300"); err != nil {
		t.Fatal(err)
	}
	n, err := srv.Revert()
	var me *tune.MismatchError
	if !errors.As(err, &me) || n != 0 {
		t.Fatalf("Revert = %d, %v; want 0 and the value read back reported", n, err)
	}
	if len(srv.pending) != 1 {
		t.Errorf("%d pending, want the unrestored value kept", len(srv.pending))
	}
	srv.closeJournal()
}
